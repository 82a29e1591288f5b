"""Rules shared by several features, pure: days, sealing, names, ranking, think time, codes.

They lie below storage and the features (with the features' own models), so a
rule two features need is written once, here, and neither imports the other.
"""
