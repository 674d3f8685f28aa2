def row_sums(x):
    return x.sum(axis=1)
