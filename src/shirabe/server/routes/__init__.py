"""The API by area: one router each."""
