"""Metric validity: chunkings of known quality (a ladder) and the statistics that ask whether HOPE
ranks them as it should. Pure functions; bench/bench_validity.py runs the models and writes files.
"""
