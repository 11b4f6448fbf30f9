"""The HTTP API and the web page."""
