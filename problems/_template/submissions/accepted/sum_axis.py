"""Sum axis.

expect: accepted
fails: none
"""
def row_sums(x):
    return x.sum(axis=1)
