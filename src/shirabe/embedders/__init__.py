"""Dense text encoders, found through the ``shirabe.embedders`` entry points."""
