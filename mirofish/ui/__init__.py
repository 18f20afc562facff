"""The pygame window: it draws snapshots and changes the world only through engine commands."""
