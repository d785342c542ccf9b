#!/usr/bin/env python3
"""Writes examples/data/housing.csv: a small synthetic regression data set for
examples/housing_regression.plexus.

500 houses, 8 numeric features and a price (in units of 100,000) that depends on them
linearly and through a few nonlinear terms, plus Gaussian noise. Seeded, standard library
only, so the file is the same on every machine:

    python3 examples/data/gen_housing.py            # rewrites examples/data/housing.csv
    python3 examples/data/gen_housing.py --rows 2000 --seed 7 --out /tmp/h.csv
"""
import argparse
import math
import os
import random

FEATURES = ["area_m2", "rooms", "age_years", "distance_km", "floor", "garden_m2", "noise_db", "school_score"]


def house(rng):
    area = rng.uniform(35, 220)
    rooms = max(1, min(8, round(area / 30 + rng.gauss(0, 0.8))))
    age = rng.uniform(0, 90)
    distance = rng.expovariate(1 / 8)  # km to the centre, mostly close
    floor = rng.randint(0, 12)
    garden = max(0.0, rng.gauss(40, 60)) if floor == 0 else 0.0
    noise = rng.uniform(35, 75)
    school = rng.uniform(1, 10)
    price = (0.9
             + 0.018 * area                          # linear in size
             + 0.12 * rooms
             - 0.012 * age + 0.00012 * age ** 2      # old houses recover some value (U shape)
             + 1.6 * math.exp(-distance / 5)         # central premium, decaying with distance
             + 0.03 * floor
             + 0.35 * math.log1p(garden / 20)
             - 0.015 * (noise - 35)
             + 0.05 * school ** 1.5 / 3              # good schools matter more than linearly
             + rng.gauss(0, 0.25))                   # noise
    return [area, rooms, age, distance, floor, garden, noise, school, max(price, 0.2)]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--out", default=os.path.join(here, "housing.csv"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with open(args.out, "w", newline="\n") as f:
        f.write(",".join(FEATURES + ["price"]) + "\n")
        for _ in range(args.rows):
            a, r, age, d, fl, g, n, s, p = house(rng)
            f.write("%.1f,%d,%.1f,%.2f,%d,%.1f,%.1f,%.2f,%.3f\n" % (a, r, age, d, fl, g, n, s, p))
    print("wrote %d rows to %s" % (args.rows, args.out))


if __name__ == "__main__":
    main()
