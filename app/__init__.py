"""Venus desktop app and command line: the only package that imports Qt."""
