"""Races: several players start the same code together and follow each other's progress."""
