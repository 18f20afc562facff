"""The aquarium: fish that forage, jam and school from what each one sees (scene.py: the window)."""
