#!/usr/bin/env python3
"""Check a speedscope JSON file against the structure the published file
format schema (https://www.speedscope.app/file-format-schema.json) requires,
plus what the schema cannot say: frame indices in range, one weight per
sample.  Standard library only.  Usage: speedscope_check.py FILE [EXPECTED_TOTAL]
(EXPECTED_TOTAL: the weights of all profiles must add up to it)."""
import json
import sys

UNITS = {"bytes", "microseconds", "milliseconds", "nanoseconds", "none", "seconds"}
SCHEMA = "https://www.speedscope.app/file-format-schema.json"
errors = []


def err(msg):
    errors.append(msg)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def need(obj, where, keys):
    for k in keys:
        if k not in obj:
            err(f"{where}: missing required '{k}'")


def check_frame(i, f):
    where = f"shared.frames[{i}]"
    if not isinstance(f, dict):
        return err(f"{where}: not an object")
    need(f, where, ["name"])
    if "name" in f and not isinstance(f["name"], str):
        err(f"{where}.name: not a string")
    if "file" in f and not isinstance(f["file"], str):
        err(f"{where}.file: not a string")
    if "line" in f and not is_num(f["line"]):
        err(f"{where}.line: not a number")
    if "col" in f and f["col"] is not None and not is_num(f["col"]):
        err(f"{where}.col: not a number or null")


def check_profile(i, p, nframes):
    where = f"profiles[{i}]"
    if not isinstance(p, dict):
        return err(f"{where}: not an object"), 0
    t = p.get("type")
    if t == "sampled":
        need(p, where, ["endValue", "name", "samples", "startValue", "type", "unit", "weights"])
    elif t == "evented":
        need(p, where, ["endValue", "events", "name", "startValue", "type", "unit"])
    else:
        return err(f"{where}.type: {t!r} is neither 'sampled' nor 'evented'"), 0
    if not isinstance(p.get("name", ""), str):
        err(f"{where}.name: not a string")
    if p.get("unit") not in UNITS:
        err(f"{where}.unit: {p.get('unit')!r} not one of {sorted(UNITS)}")
    for k in ("startValue", "endValue"):
        if k in p and not is_num(p[k]):
            err(f"{where}.{k}: not a number")
    total = 0
    if t == "sampled":
        samples, weights = p.get("samples", []), p.get("weights", [])
        if not isinstance(samples, list) or not isinstance(weights, list):
            return err(f"{where}: samples/weights not arrays"), 0
        if len(samples) != len(weights):
            err(f"{where}: {len(samples)} samples but {len(weights)} weights")
        for j, s in enumerate(samples):
            if not isinstance(s, list):
                err(f"{where}.samples[{j}]: not an array")
                continue
            for x in s:
                if not is_num(x) or x != int(x) or not 0 <= x < nframes:
                    err(f"{where}.samples[{j}]: frame index {x!r} out of range")
                    break
        for j, w in enumerate(weights):
            if not is_num(w):
                err(f"{where}.weights[{j}]: not a number")
            else:
                total += w
        if is_num(p.get("startValue")) and is_num(p.get("endValue")) and p["endValue"] < p["startValue"]:
            err(f"{where}: endValue before startValue")
    else:
        depth = 0
        for j, e in enumerate(p.get("events", [])):
            if not isinstance(e, dict) or e.get("type") not in ("O", "C") or not is_num(e.get("at")) \
                    or not is_num(e.get("frame")):
                err(f"{where}.events[{j}]: not an open/close frame event")
                continue
            depth += 1 if e["type"] == "O" else -1
            if depth < 0:
                err(f"{where}.events[{j}]: close without open")
                depth = 0
        if depth:
            err(f"{where}: {depth} frames never closed")
    return total


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except ValueError as e:
            print(f"{sys.argv[1]}: not JSON: {e}", file=sys.stderr)
            return 1
    if not isinstance(doc, dict):
        err("top level: not an object")
    else:
        need(doc, "top level", ["$schema", "profiles", "shared"])
        if doc.get("$schema") != SCHEMA:
            err(f"$schema: {doc.get('$schema')!r} is not {SCHEMA}")
        for k in ("name", "exporter"):
            if k in doc and not isinstance(doc[k], str):
                err(f"{k}: not a string")
        if "activeProfileIndex" in doc and doc["activeProfileIndex"] is not None \
                and not is_num(doc["activeProfileIndex"]):
            err("activeProfileIndex: not a number or null")
        shared = doc.get("shared", {})
        frames = shared.get("frames") if isinstance(shared, dict) else None
        if not isinstance(frames, list):
            err("shared.frames: missing or not an array")
            frames = []
        for i, fr in enumerate(frames):
            check_frame(i, fr)
        profiles = doc.get("profiles", [])
        if not isinstance(profiles, list):
            err("profiles: not an array")
            profiles = []
        total = sum(check_profile(i, p, len(frames)) or 0 for i, p in enumerate(profiles))
        if len(sys.argv) == 3 and total != float(sys.argv[2]):
            err(f"weights add up to {total}, expected {sys.argv[2]}")
    for e in errors[:20]:
        print(f"{sys.argv[1]}: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
