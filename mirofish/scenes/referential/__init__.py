"""The referential game (GlossoGen): agents invent a vocabulary through a managed glossary."""
