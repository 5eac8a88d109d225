"""HOPE's three sub-metrics (paper section 3) and their aggregation."""
