"""The accessibility reader: a window's controls and tree read from AT-SPI over D-Bus, in
bulk, and actions through the objects' own interfaces (client.py is the door)."""
