"""A desktop's life: the Desktop apps run on, starting a virtual one, finding the person's,
and ending everything that ran on it (reaper, janitor)."""
