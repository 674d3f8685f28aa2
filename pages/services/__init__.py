"""What the views stand on, with nothing visible of their own: background gradings, fair use, the class store,
this browser's saved progress and its JavaScript bridge, the reference's report."""
