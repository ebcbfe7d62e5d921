"""The decision report: one self-contained HTML page an architect opens in a browser and prints."""
