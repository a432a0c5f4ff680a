"""Train the learned router on eval/router/corpus.jsonl and write sot/router/router_model.json.

    pip install scikit-learn   # training only; the shipped model needs numpy alone
    python eval/router/train.py [--max-false-sot 0.04]

Steps (deterministic): features for every prompt; the regularisation strength picked by
cross-validation grouped by template on the train split (a fold never sees its own phrasings);
Platt calibration fitted on the out-of-fold margins; the decision threshold on the calibrated
P(SoT-suitable) = the lowest one whose out-of-fold false-SoT rate stays under --max-false-sot; the
final fit on the whole train split. The test split (held-out templates) is scored once, at the end,
with vicuna80 and eval/prompts/ for reference (never trained or tuned on); results go to
eval/results/router_train.md and .json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

ROOT = Path(__file__).resolve().parents[2]
from sot import constants  # noqa: E402
from sot.router import _features  # noqa: E402
from sot.router.evaluate import load_labelled  # noqa: E402

CORPUS = ROOT / "eval" / "router" / "corpus.jsonl"
MODEL_OUT = ROOT / "sot" / "router" / constants.ROUTER_MODEL_FILE
RESULTS = ROOT / "eval" / "results"
VICUNA = ROOT.parent / "shared" / "data" / "vicuna80.jsonl"
C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
BINS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)


def featurise(prompts: list[str], emb: _features.Embeddings) -> np.ndarray:
    return np.vstack([_features.vector(p, emb)[0] for p in prompts])


def fit(x: np.ndarray, y: np.ndarray, c: float) -> LogisticRegression:
    # Balanced classes: the corpus' mix is not the world's; the threshold sets the trade-off.
    return LogisticRegression(C=c, class_weight="balanced", max_iter=4000).fit(x, y)


def platt(margins: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    lr = LogisticRegression(C=1e4, max_iter=1000).fit(margins.reshape(-1, 1), y)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def sigmoid(z: np.ndarray) -> np.ndarray:
    p: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
    return p


def rates(p: np.ndarray, y: np.ndarray, cut: float) -> dict[str, float]:
    pred = p >= cut
    seq, sot = y == 0, y == 1
    return {
        "accuracy": float(np.mean(pred == (y == 1))),
        "false_sot": float(pred[seq].mean()) if seq.any() else 0.0,
        "sot_recall": float(pred[sot].mean()) if sot.any() else 0.0,
        "n": len(y),
        "n_sot": int(sot.sum()),
    }


def reliability(p: np.ndarray, y: np.ndarray, cut: float) -> list[dict[str, Any]]:
    """Confidence = P(the chosen mode is right); per bin, the fraction that really was right."""
    pred = p >= cut
    conf = np.where(pred, p, 1 - p)
    right = pred == (y == 1)
    rows = []
    for lo, hi in zip((0.0, *BINS[:-1]), BINS, strict=True):
        inside = (conf >= lo) & (conf < hi)
        if inside.any():
            rows.append(
                {
                    "bin": f"{lo:.1f}-{min(hi, 1.0):.1f}",
                    "n": int(inside.sum()),
                    "mean_confidence": float(conf[inside].mean()),
                    "accuracy": float(right[inside].mean()),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-false-sot", type=float, default=0.04)
    args = parser.parse_args()
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    train = [r for r in rows if r["split"] == "train"]
    test = [r for r in rows if r["split"] == "test"]
    emb = _features.load_embeddings()
    x_train = featurise([r["prompt"] for r in train], emb)
    y_train = np.array([r["label"] == "sot" for r in train], dtype=int)
    groups = np.array([r["template"] for r in train])

    folds = list(GroupKFold(n_splits=5).split(x_train, y_train, groups))
    best: tuple[float, float, np.ndarray] | None = None
    for c in C_GRID:
        margins = np.zeros(len(train))
        for fit_idx, val_idx in folds:
            margins[val_idx] = fit(x_train[fit_idx], y_train[fit_idx], c).decision_function(x_train[val_idx])
        loss = float(np.mean(np.logaddexp(0, -np.where(y_train == 1, 1, -1) * margins)))
        print(f"C={c}: out-of-fold log loss {loss:.4f}")
        if best is None or loss < best[0]:
            best = (loss, c, margins)
    assert best is not None
    _, c, oof = best
    a, b = platt(oof, y_train)
    p_oof = sigmoid(a * oof + b)
    candidates = [t for t in np.arange(0.30, 0.96, 0.01) if rates(p_oof, y_train, t)["false_sot"] <= args.max_false_sot]
    threshold = float(round(min(candidates) if candidates else 0.95, 2))

    final = fit(x_train, y_train, c)
    MODEL_OUT.write_text(
        json.dumps(
            {
                "about": "logistic regression: eval/router/train.py, features: sot/router/_features.py",
                "features": len(final.coef_[0]),
                "C": c,
                "weights": [round(float(w), 6) for w in final.coef_[0]],
                "bias": round(float(final.intercept_[0]), 6),
                "platt_a": round(a, 6),
                "platt_b": round(b, 6),
                "threshold": threshold,
            }
        )
        + "\n",
        encoding="utf-8",
    )

    def score(prompts: list[str]) -> np.ndarray:
        return sigmoid(a * final.decision_function(featurise(prompts, emb)) + b)

    y_test = np.array([r["label"] == "sot" for r in test], dtype=int)
    p_test = score([r["prompt"] for r in test])
    report: dict[str, Any] = {
        "C": c,
        "threshold": threshold,
        "train": len(train),
        "test": len(test),
        "out_of_fold": rates(p_oof, y_train, threshold),
        "test_split": rates(p_test, y_test, threshold),
        "reliability_test": reliability(p_test, y_test, threshold),
        "reliability_out_of_fold": reliability(p_oof, y_train, threshold),
        "test_by_task": {},
        "reference_sets": {},
    }
    for task in sorted({r["task"] for r in test}):
        idx = [i for i, r in enumerate(test) if r["task"] == task]
        report["test_by_task"][task] = rates(p_test[idx], y_test[idx], threshold)
    refs = [VICUNA, *sorted((ROOT / "eval" / "prompts").glob("router_*.jsonl"))]
    for path in refs:
        if path.is_file():
            labelled = load_labelled(path)
            y = np.array([lab == "sot" for _, lab in labelled], dtype=int)
            report["reference_sets"][path.stem] = rates(score([p for p, _ in labelled]), y, threshold)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "router_train.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (RESULTS / "router_train.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


def markdown(r: dict[str, Any]) -> str:
    def row(name: str, m: dict[str, float]) -> str:
        return (
            f"| {name} | {m['n']} | {m['n_sot']} | {m['accuracy']:.3f} | {m['false_sot']:.3f} | {m['sot_recall']:.3f} |"
        )

    head = (
        "| set | prompts | SoT-suitable | accuracy | sequential sent to SoT | SoT caught |\n|---|---|---|---|---|---|"
    )
    lines = [
        "# Learned router: training report (eval/router/train.py)",
        "",
        f"C = {r['C']}, decision threshold on calibrated P(SoT-suitable) = {r['threshold']}; "
        f"train {r['train']} prompts, test {r['test']} (held-out templates).",
        "",
        head,
        row("train, out-of-fold (grouped by template)", r["out_of_fold"]),
        row("test split (held-out templates)", r["test_split"]),
    ]
    lines += [row(name, m) for name, m in r["reference_sets"].items()]
    lines += [
        "",
        "## Reliability of Route.confidence (test split)",
        "",
        "| confidence | prompts | mean confidence | fraction right |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {b['bin']} | {b['n']} | {b['mean_confidence']:.3f} | {b['accuracy']:.3f} |" for b in r["reliability_test"]
    ]
    lines += [
        "",
        "## Reliability (train, out-of-fold)",
        "",
        "| confidence | prompts | mean confidence | fraction right |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {b['bin']} | {b['n']} | {b['mean_confidence']:.3f} | {b['accuracy']:.3f} |"
        for b in r["reliability_out_of_fold"]
    ]
    lines += ["", "## Test split by task type", "", head]
    lines += [row(name, m) for name, m in r["test_by_task"].items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
