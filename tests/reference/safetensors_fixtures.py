"""Reference for tests/safetensors.rs, from the Python `safetensors` package.

Run from the repository root (the venv is gitignored):

    python3 -m venv benches/.venv-st
    benches/.venv-st/bin/pip install safetensors numpy
    benches/.venv-st/bin/python tests/reference/safetensors_fixtures.py

It does two things:

1. Writes fixtures into tests/fixtures/safetensors/ with the Python package
   (`safetensors.numpy.save_file`, or `safetensors.serialize_file` with a raw
   `TensorSpec` for BF16, which numpy has no dtype for: its bits are built by
   hand), plus `expected.json` with every tensor's name, dtype, shape and
   values (each value `repr(float(v))`, so exact; for integer dtypes the f64
   nearest the stored integer, the exact integer being in "ints"). It also
   writes hand-built edge cases under cases/ and records in `cases.json`
   whether the Python package accepts each one (and what it returns) or
   rejects it (and its message); `kind` is the error kind faber should give.
2. Loads tests/fixtures/safetensors/written_by_faber.safetensors (committed,
   produced by faber's writer, see tests/safetensors.rs) with the Python
   package and checks names, dtypes, shapes, values and metadata against
   values computed here from the same f64 inputs: F32 by numpy's rounding,
   F16 and BF16 by exact rational round-to-nearest-even, integers exactly.

Re-running it rewrites the fixtures; metadata with several keys may come out
in another order (the package keeps metadata in a hash map), which is fine as
expected.json is rewritten alongside.
"""

import json
import math
import os
import struct
import sys
from fractions import Fraction

import numpy as np
import safetensors
from safetensors import TensorSpec, deserialize, safe_open, serialize_file
from safetensors.numpy import save_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "safetensors")
CASES = os.path.join(ROOT, "cases")


def r(v):
    return repr(float(v))


# ---------------------------------------------------------------- fixtures

def bf16_bits_to_float(bits):
    # BF16 is the top half of an IEEE binary32.
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def fixtures():
    os.makedirs(CASES, exist_ok=True)
    expected = {}

    def record(fname, tensors, metadata, raw=None):
        """tensors: name -> numpy array (or, for BF16, (bits array, values))."""
        entries = []
        with safe_open(os.path.join(ROOT, fname), framework="np") as f:
            meta = f.metadata() or {}
        for name, dtype, shape, _data in [(k, v["dtype"], v["shape"], v["data"]) for k, v in
                                            deserialize(open(os.path.join(ROOT, fname), "rb").read())]:
            if raw and name in raw:
                values = raw[name]
                ints = None
            else:
                a = tensors[name]
                flat = a.reshape(-1).tolist()
                if a.dtype.kind in "iub":
                    ints = [int(x) for x in flat]
                    values = [r(x) for x in ints]
                else:
                    ints = None
                    values = [r(x) for x in flat]
            e = {"name": name, "dtype": dtype, "shape": list(shape), "values": values}
            if ints is not None:
                e["ints"] = [str(x) for x in ints]
            entries.append(e)
        assert meta == (metadata or {}), (meta, metadata)
        # Metadata in the order the file holds it.
        header = read_header(os.path.join(ROOT, fname))
        meta_order = list((header.get("__metadata__") or {}).items())
        # Tensors in buffer order (the order faber returns them in).
        entries.sort(key=lambda e: tuple(header[e["name"]]["data_offsets"]))
        expected[fname] = {"tensors": entries, "metadata": [list(kv) for kv in meta_order]}

    # 1. Floats of ranks 0-3, empty tensors, specials, metadata.
    t = {
        "scalar_f64": np.array(3.141592653589793, dtype=np.float64),
        "vec_f64": np.array([0.1, -2.5, 1e300, 5e-324, -0.0, math.inf, -math.inf, math.nan], dtype=np.float64),
        "mat_f32": np.array([[0.1, 1e-45, 3.4028234663852886e38], [-0.0, math.nan, -1.5]], dtype=np.float32),
        "cube_f64": (np.arange(24, dtype=np.float64) * 0.25 - 1.0).reshape(2, 3, 4),
        "empty_f32": np.zeros((0,), dtype=np.float32),
        "empty_f64": np.zeros((2, 0, 3), dtype=np.float64),
    }
    meta = {"format": "np", "note": "fixture \u00fcn\u00efcode \"quoted\"\n"}
    save_file(t, os.path.join(ROOT, "floats.safetensors"), metadata=meta)
    record("floats.safetensors", t, meta)

    # 2. 64- and 32-bit integers, including values an f64 cannot hold.
    t = {
        "i64_vec": np.array([0, -1, 2**53, 2**53 + 1, -2**63, 2**63 - 1, 123456789012345678], dtype=np.int64),
        "i32_mat": np.array([[-2**31, 2**31 - 1], [7, -7]], dtype=np.int32),
        "i64_scalar": np.array(-42, dtype=np.int64),
        "i64_empty": np.zeros((3, 0), dtype=np.int64),
    }
    meta = {"kind": "ints"}
    save_file(t, os.path.join(ROOT, "ints.safetensors"), metadata=meta)
    record("ints.safetensors", t, meta)

    # 3. F16 (numpy) and BF16 (raw bits through TensorSpec; numpy has no bfloat16).
    f16 = np.array([[1.0, 0.1, 65504.0, 2.0**-24], [-0.0, math.inf, math.nan, 1.0 / 3.0]], dtype=np.float16)
    bf16_bits = np.array([0x3F80, 0xBF80, 0x7F7F, 0x0001, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x3EAB, 0x4049],
                         dtype=np.uint16).reshape(2, 5)
    keep = [f16, bf16_bits]
    specs = {
        "f16_mat": TensorSpec(dtype="float16", shape=list(f16.shape), data_ptr=f16.ctypes.data, data_len=f16.nbytes),
        "bf16_mat": TensorSpec(dtype="bfloat16", shape=list(bf16_bits.shape), data_ptr=bf16_bits.ctypes.data,
                               data_len=bf16_bits.nbytes),
    }
    serialize_file(specs, os.path.join(ROOT, "halfs.safetensors"))
    del keep
    record("halfs.safetensors", {"f16_mat": f16}, None,
           raw={"bf16_mat": [r(bf16_bits_to_float(int(b))) for b in bf16_bits.reshape(-1)]})

    # 4. The narrow integer types and BOOL.
    t = {
        "u8": np.array([0, 1, 255], dtype=np.uint8),
        "i8": np.array([-128, 0, 127], dtype=np.int8),
        "u16": np.array([0, 65535], dtype=np.uint16),
        "i16": np.array([[-32768], [32767]], dtype=np.int16),
        "u32": np.array([4294967295, 0], dtype=np.uint32),
        "u64": np.array([2**64 - 1, 2**53 + 1, 5], dtype=np.uint64),
        "flags": np.array([True, False, True], dtype=np.bool_),
    }
    save_file(t, os.path.join(ROOT, "small_ints.safetensors"))
    record("small_ints.safetensors", t, None)

    # 5. No tensors at all.
    save_file({}, os.path.join(ROOT, "empty.safetensors"))
    record("empty.safetensors", {}, None)

    # 6. Names and metadata that need JSON escapes (serde_json's style).
    names = ["quote\"back\\slash", "tab\tnl\ncr\r", "ctl\x01\x1f\x7f", "\u00fcn\u00ef\u20ac\U0001F600", "", "/slash"]
    t = {n: np.array([float(i)], dtype=np.float32) for i, n in enumerate(names)}
    meta = {"k\"\\\x02": "v\n\u00e9\U0001F600"}
    save_file(t, os.path.join(ROOT, "names.safetensors"), metadata=meta)
    record("names.safetensors", t, meta)

    with open(os.path.join(ROOT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, ensure_ascii=True)
        f.write("\n")


def read_header(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n].decode("utf-8"))


# ---------------------------------------------------------------- edge cases

def case_bytes(header, buf=b"", length=None):
    h = header.encode("utf-8") if isinstance(header, str) else header
    return struct.pack("<Q", len(h) if length is None else length) + h + buf


F4 = '{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'

# (file, bytes, faber's error kind or None when it must accept)
CASE_LIST = [
    ("empty_input", b"", "Truncated"),
    ("seven_bytes", b"\x08\x00\x00\x00\x00\x00\x00", "Truncated"),
    ("header_len_beyond_file", case_bytes("{}", length=10), "Truncated"),
    ("header_len_huge", struct.pack("<Q", 2**63) + b"{}", "Limit"),
    ("header_len_over_100mb", struct.pack("<Q", 100_000_001) + b"{}", "Limit"),
    ("header_empty", case_bytes(""), "Header"),
    ("header_not_utf8", case_bytes(b'{"\xff":' + F4.encode() + b"}", b"\0" * 4), "Header"),
    ("header_bad_json", case_bytes("{x"), "Header"),
    ("header_array", case_bytes("[]"), "Header"),
    ("header_null", case_bytes("null"), "Header"),
    ("header_trailing_nul", case_bytes("{}\0"), "Header"),
    ("header_trailing_comma", case_bytes('{"a":' + F4 + ',}', b"\0" * 4), "Header"),
    ("header_two_objects", case_bytes("{}{}"), "Header"),
    ("header_leading_zero", case_bytes('{"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_float_dim", case_bytes('{"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_exponent_dim", case_bytes('{"a":{"dtype":"F32","shape":[1e0],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_number_dot", case_bytes('{"a":{"dtype":"F32","shape":[1.],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_number_exp", case_bytes('{"a":{"dtype":"F32","shape":[1e],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_number_minus", case_bytes('{"a":{"dtype":"F32","shape":[-],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_number_plus", case_bytes('{"a":{"dtype":"F32","shape":[+1],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_bad_literal", case_bytes('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":tru}}', b"\0" * 4), "Header"),
    ("header_unterminated", case_bytes('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}', b"\0" * 4), "Header"),
    ("header_negative_dim", case_bytes('{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_dim_2_64", case_bytes('{"a":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_shape_null", case_bytes('{"a":{"dtype":"F32","shape":null,"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_three_offsets", case_bytes('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,4]}}', b"\0" * 4), "Header"),
    ("header_offsets_object", case_bytes('{"a":{"dtype":"F32","shape":[1],"data_offsets":{"0":0}}}', b"\0" * 4), "Header"),
    ("header_missing_field", case_bytes('{"a":{"dtype":"F32","shape":[1]}}', b"\0" * 4), "Header"),
    ("header_duplicate_field", case_bytes('{"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 4), "Header"),
    ("header_tensor_string", case_bytes('{"a":"x"}'), "Header"),
    ("header_metadata_twice", case_bytes('{"__metadata__":{"a":"1"},"__metadata__":{"b":"2"}}'), "Header"),
    ("header_metadata_number", case_bytes('{"__metadata__":{"a":1}}'), "Header"),
    ("header_metadata_array", case_bytes('{"__metadata__":[]}'), "Header"),
    ("header_lone_surrogate", case_bytes('{"a\\ud83d":' + F4 + '}', b"\0" * 4), "Header"),
    ("header_lone_low_surrogate", case_bytes('{"a\\ude00":' + F4 + '}', b"\0" * 4), "Header"),
    ("header_raw_control", case_bytes('{"a\x01":' + F4 + '}', b"\0" * 4), "Header"),
    ("header_bad_escape", case_bytes('{"a\\x":' + F4 + '}', b"\0" * 4), "Header"),
    ("header_deep_nesting", case_bytes('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"z":' + "[" * 200 + "]" * 200 + '}}', b"\0" * 4), "Header"),
    ("header_duplicate_name_different", case_bytes('{"a":' + F4 + ',"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8), "Header"),
    ("dtype_unknown", case_bytes('{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}', b"\0" * 16), "Dtype"),
    ("dtype_lowercase", case_bytes('{"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 4), "Dtype"),
    ("offsets_size_mismatch", case_bytes('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', b"\0" * 4), "Offsets"),
    ("offsets_backwards", case_bytes('{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}', b"\0" * 4), "Offsets"),
    ("offsets_gap_at_start", case_bytes('{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8), "Offsets"),
    ("offsets_gap_between", case_bytes('{"a":' + F4 + ',"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}', b"\0" * 12), "Offsets"),
    ("offsets_overlap", case_bytes('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8), "Offsets"),
    ("offsets_trailing_bytes", case_bytes('{"a":' + F4 + '}', b"\0" * 5), "Offsets"),
    ("offsets_trailing_bytes_no_tensors", case_bytes("{}", b"\0"), "Offsets"),
    ("data_truncated", case_bytes('{"a":' + F4 + '}', b"\0" * 3), "Truncated"),
    ("shape_overflow", case_bytes('{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}', b"\0" * 4), "Limit"),
    ("shape_bytes_overflow", case_bytes('{"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4]}}', b"\0" * 4), "Limit"),
    # Accepted by both.
    ("ok_empty_object", case_bytes("{}"), None),
    ("ok_whitespace", case_bytes(' \n{\t"a" : ' + F4 + '\r\n} ', b"\0\0\x80\x3f"), None),
    ("ok_metadata_null", case_bytes('{"__metadata__":null,"a":' + F4 + '}', b"\0\0\0\x40"), None),
    ("ok_unknown_field", case_bytes('{"a":{"dtype":"F32","extra":{"x":[1,2.5,true,false,null,-0,-1.5e-3,2E+10,0.0e0,"s"]},"shape":[1],"data_offsets":[0,4]}}', b"\0\0\0\xc0"), None),
    ("ok_offsets_out_of_header_order", case_bytes('{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":' + F4 + '}', b"\0\0\x80\x3f\0\0\0\x40"), None),
    ("ok_empty_tensors_share_offsets", case_bytes('{"c":{"dtype":"F32","shape":[0,5],"data_offsets":[4,4]},"b":' + F4 + ',"a":{"dtype":"F64","shape":[0],"data_offsets":[0,0]}}', b"\0\0\x80\x3f"), None),
    ("ok_zero_dim_first_no_overflow", case_bytes('{"a":{"dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}}'), None),
    ("ok_escapes_and_surrogates", case_bytes('{"a\\u00e9\\ud83d\\ude00\\n\\/\\"\\\\\\b\\f\\r\\t\\u0041":' + F4 + '}', b"\0\0\x80\x3f"), None),
    ("ok_metadata_looks_like_tensor", case_bytes('{"__metadata__":{"dtype":"F32","shape":"[1]","data_offsets":"x"}}'), None),
    ("ok_metadata_empty_header_padded", case_bytes('{"__metadata__":{}}     '), None),
]


def cases():
    manifest = []
    for name, data, kind in CASE_LIST:
        fname = name + ".safetensors"
        with open(os.path.join(CASES, fname), "wb") as f:
            f.write(data)
        entry = {"file": fname, "kind": kind}
        try:
            out = deserialize(data)
        except Exception as e:  # noqa: BLE001 - the package raises SafetensorError
            assert kind is not None, f"{name}: python rejects an input faber must accept: {e}"
            entry["python"] = "error: " + str(e)
        else:
            assert kind is None, f"{name}: python accepts an input faber must reject"
            entry["python"] = "ok"
            entry["tensors"] = sorted(
                [[k, v["dtype"], list(v["shape"]),
                  [r(x) for x in np.frombuffer(v["data"], dtype={"F32": np.float32, "F64": np.float64}[v["dtype"]])]]
                 for k, v in out], key=lambda e: e[0])
        manifest.append(entry)
    with open(os.path.join(ROOT, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=True)
        f.write("\n")


# ---------------------------------------------------------------- faber's file

def round_binary(x, man_bits, exp_bits):
    """Nearest value of the binary format (ties to even), from the exact rational x.
    Returns a float; overflow gives +-inf. Written independently of faber's code:
    compares x with the two neighbouring representable values."""
    if math.isnan(x) or math.isinf(x):
        return x
    bias = 2 ** (exp_bits - 1) - 1
    emin = 1 - bias
    quantum_min = Fraction(2) ** (emin - man_bits)
    largest = (2 - Fraction(2) ** -man_bits) * Fraction(2) ** bias
    q = Fraction(x)
    sign = -1 if (q < 0 or (q == 0 and math.copysign(1.0, x) < 0)) else 1
    a = abs(q)
    if a == 0:
        return math.copysign(0.0, sign)
    e = emin
    while a >= Fraction(2) ** (e + 1):
        e += 1
    quantum = max(Fraction(2) ** (e - man_bits), quantum_min)
    lo = (a // quantum) * quantum
    hi = lo + quantum
    if a - lo < hi - a:
        v = lo
    elif a - lo > hi - a:
        v = hi
    else:
        v = lo if (lo / quantum) % 2 == 0 else hi
    # Overflow: beyond the largest finite value by half a quantum or more.
    if v > largest:
        return sign * math.inf
    return sign * float(v)


def check_faber_file():
    path = os.path.join(ROOT, "written_by_faber.safetensors")
    if not os.path.exists(path):
        print(f"skip: {path} does not exist yet (FABER_WRITE_FIXTURE=1 cargo test --test safetensors)")
        return False
    data = open(path, "rb").read()
    # The f64 inputs faber was given (tests/safetensors.rs, faber_written_tensors).
    inputs = [
        ("f64_mat", "F64", [2, 3], [0.1, -2.5, 1e300, 5e-324, -0.0, 6.02214076e23]),
        ("f64_scalar", "F64", [], [3.141592653589793]),
        ("f64_special", "F64", [3], [math.nan, math.inf, -math.inf]),
        ("f32_vec", "F32", [7], [0.1, 1.0 / 3.0, 1e-46, 3.5e38, 16777217.0, -1.5, math.nan]),
        ("f16_vec", "F16", [8], [1 + 2**-11 + 2**-40, 65504.0, 65520.0, 2.0**-25, 3 * 2.0**-26, -0.1, 2049.0, math.nan]),
        ("bf16_mat", "BF16", [2, 2], [1 + 2**-8 + 2**-30, 3.140625, -1e-40, 3.4e38]),
        ("i64_vec", "I64", [4], [-9007199254740992.0, 0.0, 42.0, 9.2e18]),
        ("i32_cube", "I32", [2, 1, 2], [-2147483648.0, 2147483647.0, 7.0, -7.0]),
        ("u8_vec", "U8", [3], [0.0, 128.0, 255.0]),
        ("bool_vec", "BOOL", [4], [1.0, 0.0, 0.0, 1.0]),
        ("empty", "F32", [0, 3], []),
    ]
    meta = {"format": "pt", "creator": "faber \u00fcn\u00efcode \"q\"\n\t\x01"}

    def expect(dtype, x):
        if dtype == "F64":
            return x
        if dtype == "F32":
            with np.errstate(over="ignore"):
                return float(np.float32(x))
        if dtype == "F16":
            return round_binary(x, 10, 5)
        if dtype == "BF16":
            return round_binary(x, 7, 8)
        assert x == int(x)
        return int(x)

    np_types = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "U8": "u1", "BOOL": "?"}
    loaded = deserialize(data)  # validates the whole file, as the package does for every load
    assert sorted(k for k, _ in loaded) == sorted(name for name, *_ in inputs), [k for k, _ in loaded]
    got = dict(loaded)
    for name, dtype, shape, xs in inputs:
        v = got[name]
        assert v["dtype"] == dtype, (name, v["dtype"], dtype)
        assert list(v["shape"]) == shape, (name, v["shape"], shape)
        if dtype == "BF16":
            vals = [bf16_bits_to_float(b) for b in struct.unpack(f"<{len(xs)}H", v["data"])]
        else:
            vals = np.frombuffer(v["data"], dtype=np_types[dtype]).tolist()
        want = [expect(dtype, x) for x in xs]
        assert len(vals) == len(want), (name, vals, want)
        for g, w in zip(vals, want):
            if isinstance(w, float) and math.isnan(w):
                assert math.isnan(g), (name, g, w)
            elif isinstance(w, float):
                assert g == w and math.copysign(1, g) == math.copysign(1, w), (name, g, w)
            else:
                assert g == w and type(g) in (int, bool), (name, g, w)
    # The numpy front end loads everything but BF16 from the same bytes.
    with safe_open(path, framework="np") as f:
        assert f.metadata() == meta, f.metadata()
        for name, dtype, shape, _ in inputs:
            if dtype != "BF16":
                assert list(f.get_tensor(name).shape) == shape
    # Layout: data_offsets follow the order given to faber, contiguously.
    header = read_header(path)
    assert list(header)[0] == "__metadata__"
    assert [k for k in header if k != "__metadata__"] == [name for name, *_ in inputs]
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0
    print(f"ok: {path} verified with safetensors {safetensors.__version__} ({len(inputs)} tensors)")
    return True


def main():
    fixtures()
    cases()
    print(f"wrote fixtures in {os.path.normpath(ROOT)} with safetensors {safetensors.__version__}, numpy {np.__version__}")
    ok = check_faber_file()
    # Self-check of the independent rounding against numpy's (F16 only; direct from f64).
    for x in [1 + 2**-11 + 2**-40, 65520.0, 2.0**-25, 3 * 2.0**-26, -0.1, 2049.0, 1e-8, 6.1e-5]:
        with np.errstate(over="ignore"):
            assert round_binary(x, 10, 5) == float(np.float16(np.float64(x))), x
    return 0 if ok or "--allow-missing" in sys.argv else 1


if __name__ == "__main__":
    sys.exit(main())
