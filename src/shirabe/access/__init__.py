"""Who may read what: the access map, readers and their filters, users and API tokens."""
