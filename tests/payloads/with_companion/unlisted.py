SECRET = "not a companion: bubblewrap must not show it"
