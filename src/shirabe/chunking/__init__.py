"""Turning loaded documents into retrievable chunks."""
