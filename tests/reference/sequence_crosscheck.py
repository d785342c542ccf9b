#!/usr/bin/python3
"""Cross-checks the sequence layers against PyTorch: random LSTM / GRU / RNN / attention /
LayerNorm graphs, `plexus-cli init` + `plexus-cli grad` against torch in float64.

ctest runs it as reference_sequence (Skipped where torch is missing); by hand, with Debian's PyTorch:

    /usr/bin/python3 tests/reference/sequence_crosscheck.py [build/app/plexus-cli] [--seed S] [--graphs K]

It writes, in a temporary folder, a small UTF-8 text file (a `text` dataset) and K project files
(default 16) drawn from a seeded generator: an Embedding, then one of

  - a recurrent stack: LSTM, GRU or RNN with random hidden size, 1-3 layers, one or both
    directions, half the time over each example's SequenceLengths (torch: each example's first
    steps alone), sometimes a LayerNorm after it;
  - a causal or full transformer block: PositionalEmbedding (learned or sinusoidal), LayerNorm,
    MultiheadAttention with random heads (and half the time key lengths, SequenceLengths of the
    ids), a residual Add, LayerNorm, a GELU MLP and a second residual Add;
  - cross-attention: sinusoidal positions, the sequence attending to itself max-pooled to half
    its length (key, and value directly or through a Linear), a residual Add;
  - a sequence pooled to one vector (SequencePool, mean / max / last / first), over each
    example's SequenceLengths (its ids other than 0) or every position, after a recurrent layer
    or straight from the Embedding, then a Linear regressing the T next ids (MSE);

then (but for the pooled ones) a Linear to the vocabulary and CrossEntropy over every position
([N, T, V] against [N, T]). Each project goes through grad_crosscheck.check: our loss and every parameter gradient
against torch's (torch's own nn.LSTM/GRU/RNN/MultiheadAttention modules, run on our weights),
relative tolerance 1e-4 of each tensor's largest magnitude.

Exit status 0 when every graph matches, 1 otherwise.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck  # noqa: E402

ALPHABET = "abcdefghijkl \n"


node, edge = grad_crosscheck.node, grad_crosscheck.edge


class GraphBuilder:
    def __init__(self):
        self.nodes, self.edges, self.count = [node("in", "Input")], [], 0

    def add(self, kind, inputs, params=None, port="input"):
        self.count += 1
        nid = "%s%d" % (kind.lower(), self.count)
        self.nodes.append(node(nid, kind, params))
        for src in inputs:
            self.edges.append(edge(src, nid, port, "x" if src == "in" else "output"))
        return nid


def recurrent_graph(rng, embed):
    g = GraphBuilder()
    h = g.add("Embedding", ["in"], {"num_embeddings": len(ALPHABET), "embedding_dim": embed})
    kind = rng.choice(["LSTM", "GRU", "RNN"])
    h = g.add(kind, [h], {"hidden_size": rng.choice([5, 8, 12]), "num_layers": rng.randint(1, 3),
                          "bidirectional": rng.random() < 0.5})
    padded = rng.random() < 0.5
    if padded:  # each example its first steps: as many as its ids other than 0
        g.edges.append(edge(g.add("SequenceLengths", ["in"]), h, "lengths", "output"))
        kind += " over lengths"
    if rng.random() < 0.4:
        h = g.add("LayerNorm", [h])
    return g, h, kind


def transformer_graph(rng, embed, steps):
    g = GraphBuilder()
    x = g.add("Embedding", ["in"], {"num_embeddings": len(ALPHABET), "embedding_dim": embed})
    x = g.add("PositionalEmbedding", [x], {"max_len": steps + rng.randint(0, 4),
                                           "kind": rng.choice(["learned", "sinusoidal"])})
    causal = rng.random() < 0.7
    a = g.add("LayerNorm", [x])
    a = g.add("MultiheadAttention", [a], {"num_heads": rng.choice([h for h in (1, 2, 4) if embed % h == 0]),
                                          "causal": causal})
    padded = rng.random() < 0.5
    if padded:  # the keys of each example: its ids other than 0
        g.edges.append(edge(g.add("SequenceLengths", ["in"]), a, "lengths", "output"))
    x = g.add("Add", [x, a], port="inputs")
    m = g.add("LayerNorm", [x])
    m = g.add("Linear", [m], {"out_features": 2 * embed})
    m = g.add("GELU", [m])
    m = g.add("Linear", [m], {"out_features": embed})
    x = g.add("Add", [x, m], port="inputs")
    return g, x, "attention (%s%s)" % ("causal" if causal else "full", ", key lengths" if padded else "")


def cross_attention_graph(rng, embed, steps):
    """Queries from every position attending to a memory of half as many (the sequence max-pooled
    over time), its keys and, half the time, values of their own through a Linear."""
    g = GraphBuilder()
    x = g.add("Embedding", ["in"], {"num_embeddings": len(ALPHABET), "embedding_dim": embed})
    x = g.add("PositionalEmbedding", [x], {"max_len": steps, "kind": "sinusoidal"})
    m = g.add("Permute", [x], {"dims": [0, 2, 1]})
    m = g.add("MaxPool1d", [m], {"kernel_size": 2})
    m = g.add("Permute", [m], {"dims": [0, 2, 1]})
    a = g.add("MultiheadAttention", [x], {"num_heads": rng.choice([h for h in (1, 2, 4) if embed % h == 0]),
                                          "causal": False})
    g.edges.append(edge(m, a, "key", "output"))
    values = rng.random() < 0.5
    if values:
        v = g.add("Linear", [m], {"out_features": embed})
        g.edges.append(edge(v, a, "value", "output"))
    x = g.add("Add", [x, a], port="inputs")
    return g, x, "cross-attention to %d positions, %s" % (steps // 2, "own values" if values else "values = keys")


def pooled_graph(rng, embed):
    """A sequence pooled to one vector, over each example's length (its ids other than 0) or
    over every position; regressed onto the window's next ids by the head (pooled=True)."""
    g = GraphBuilder()
    x = g.add("Embedding", ["in"], {"num_embeddings": len(ALPHABET), "embedding_dim": embed})
    if rng.random() < 0.6:
        x = g.add(rng.choice(["LSTM", "GRU", "RNN"]), [x], {"hidden_size": rng.choice([5, 8]),
                                                              "bidirectional": rng.random() < 0.3})
    mode = rng.choice(["mean", "max", "last", "first"])
    p = g.add("SequencePool", [x], {"mode": mode})
    lengths = rng.random() < 0.7
    if lengths:
        g.edges.append(edge(g.add("SequenceLengths", ["in"]), p, "lengths", "output"))
    return g, p, "%s pooling%s" % (mode, " over lengths" if lengths else "")


def project(g, last, steps, pooled=False):
    # A pooled sequence [N, E] has no positions to classify: MSE against the T target ids instead.
    out = g.add("Linear", [last], {"out_features": steps if pooled else len(ALPHABET)})
    loss = g.add("MSE" if pooled else "CrossEntropy", [out])
    g.edges.append(edge("in", loss, "target", "y"))
    return grad_crosscheck.table_project(g.nodes, g.edges, {"kind": "text", "path": "corpus.txt", "seq_len": steps})


def main():
    def corpus(workdir, rng):
        text = "".join(rng.choice(ALPHABET) for _ in range(4000)) + ALPHABET  # every character occurs
        with open(os.path.join(workdir, "corpus.txt"), "w", encoding="utf-8") as f:
            f.write(text)

    def make(rng, i):
        steps, embed = rng.choice([3, 7, 12]), rng.choice([4, 8, 12])
        if i % 4 == 0:
            g, last, what = recurrent_graph(rng, embed)
        elif i % 4 == 1:
            g, last, what = transformer_graph(rng, embed, steps)
        elif i % 4 == 2:
            g, last, what = cross_attention_graph(rng, embed, steps)
        else:
            g, last, what = pooled_graph(rng, embed)
        return project(g, last, steps, pooled=i % 4 == 3), "%s, T %d, E %d" % (what, steps, embed)

    grad_crosscheck.RTOL = 1e-4
    return grad_crosscheck.run_random_graphs("seq", 5, 16, make, check_seed=31, setup=corpus, random_weights=False)


if __name__ == "__main__":
    sys.exit(main())
