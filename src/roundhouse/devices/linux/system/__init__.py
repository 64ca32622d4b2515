"""What the system tells the desktop layer: processes (procfs), the bus daemon's own
service, and whether an environment has a display."""
