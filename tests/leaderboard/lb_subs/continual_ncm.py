"""A solver submission for ContinualDomains-v0 (numpy only, no papergym import): nearest class mean on the shipped
backbone's features, the class means accumulated over every domain seen (a continual learner that cannot forget),
driven through the evaluator's stream; no experts are reported."""

import numpy as np


class NearestClassMean:
    def __init__(self, *, seed=None):
        self.seed = seed

    def solve(self, problem, budget, report):
        bb = problem.backbone
        W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (bb.W1, bb.b1, bb.W2, bb.b2))

        def feats(X):
            h = np.maximum(np.asarray(X, dtype=float) @ W1.T + b1, 0.0)
            return np.maximum(h @ W2.T + b2, 0.0)

        n_labels = int(problem.n_labels)
        sums = np.zeros((n_labels, W2.shape[0]))
        counts = np.zeros(n_labels)
        stream = problem.stream

        def predict(batches):
            means = sums / np.maximum(counts, 1.0)[:, None]
            out = []
            for b in batches:
                d = ((feats(b)[:, None, :] - means[None]) ** 2).sum(-1)
                d[:, counts == 0] = np.inf
                out.append(d.argmin(axis=1).astype(np.int64))
            return out

        added = []
        while True:
            dom = stream.next_domain()
            if dom is None:
                break
            lab = np.asarray(dom["y"], dtype=np.int64) + int(dom["label_offset"])
            np.add.at(sums, lab, feats(dom["X"]))
            new = int(np.sum(counts[int(dom["label_offset"]) : int(dom["label_offset"]) + int(dom["n_classes"])] == 0))
            np.add.at(counts, lab, 1.0)
            added.append(new * W2.shape[0])
            stream.answer(predict(stream.test_batches()))
        stream.answer(predict(stream.test_batches()))
        return {"params_added": added}
