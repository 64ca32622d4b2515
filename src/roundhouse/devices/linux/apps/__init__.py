"""Applications: which one a request names (desktop files, launcher) and starting it."""
