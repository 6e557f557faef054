#!/usr/bin/env python3
"""Expected stdout of tests/run/436_norma_crypta.fab, from Python's hashlib (OpenSSL's
SHA-2), not from faber. `python3 norma_crypta.py > ../../run/436_norma_crypta.out`."""

import hashlib

M448 = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
M896 = (b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
        b"klmnopqrlmnopqrsmnopqrstnopqrstu")

for alg in ["sha256", "sha384", "sha512"]:
    for m in [b"abc", b"", M448 if alg == "sha256" else M896]:
        print(hashlib.new(alg, m).hexdigest())
print("%d, %d" % (hashlib.sha512(b"\0").digest_size, hashlib.sha384(b"\0").digest_size))
for _ in ["", "md5", "SHA256", "sha-256", "sha224"]:
    print("norma:crypta.digere: algorithm must be sha256, sha384, or sha512")
