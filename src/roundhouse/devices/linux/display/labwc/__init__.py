"""labwc: wlroots input and screencopy, and the windows through wlr-foreign-toplevel."""
