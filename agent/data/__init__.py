"""agent/data"""
