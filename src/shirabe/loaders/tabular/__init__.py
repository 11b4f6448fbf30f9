"""Turning spreadsheet-like rows (Excel sheets, CSV files) into searchable records.

Both the Excel and the CSV loader read their file into :class:`~.rows.Row` objects (only
non-empty cells, each already formatted as text by :mod:`.values`) and hand them to
:func:`.layout.layout`, which finds the structure a person sees in the sheet and yields
title, record and note events (see :mod:`.layout`). :mod:`.delimited` finds the delimiter of
CSV-like text.
"""
