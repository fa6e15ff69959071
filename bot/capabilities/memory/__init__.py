"""placeholder docstring replaced below"""
