"""Each scene's window: the aquarium (live, replay, fork), the referential game, the
negotiation, the report chain and the reef's map — over the scenes' models in
:mod:`mirofish.scenes` and the sessions; the view side of the protocol is base.py's."""
