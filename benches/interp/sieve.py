# Benchmark twin of sieve.fab: same loops, a list of bools; prints 78498.
def main():
    n = 1000000
    compositus = []
    for _i in range(0, n + 1):
        compositus.append(False)
    primi = 0
    for i in range(2, n + 1):
        if not compositus[i]:
            primi = primi + 1
            for k in range(i * i, n + 1, i):
                compositus[k] = True
    print(primi)


main()
