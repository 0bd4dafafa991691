"""Analyses over a Module: built on demand, thrown away when a pass changes what they index."""
