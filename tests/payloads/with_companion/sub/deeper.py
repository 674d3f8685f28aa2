VALUE = "from a folder below"
