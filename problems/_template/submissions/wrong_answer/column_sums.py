"""Column sums.

expect: wrong_answer
fails: none
"""
def row_sums(x):
    return x.sum(axis=0)
