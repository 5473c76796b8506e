"""The same battles in the public Chatbot Arena export format"""

from datetime import UTC, datetime

from sample_data.battles import LOSE_WEIGHTS, WIN_WEIGHTS, build_pool, conversation, maybe_cite, pick, variants_of
from sample_data.common import OPPONENTS, OWN_MODEL, rng_for

ARENA_WINNERS = ["model_a"] * 8 + ["model_b"] * 8 + ["tie"] * 5 + ["tie (bothbad)"] * 3


def make_arena(seed):
    """24 arena rows; our model sits on side a in half of them and on side b in the other half."""
    rng = rng_for(seed, "arena")
    pool = build_pool(rng, 150)
    picks = rng.sample(pool, len(ARENA_WINNERS))
    winners = list(ARENA_WINNERS)
    rng.shuffle(winners)
    ours_on_a = [True] * 12 + [False] * 12
    rng.shuffle(ours_on_a)
    start = datetime(2026, 3, 2, tzinfo=UTC).timestamp()
    rows = []
    for i, (inst, winner) in enumerate(zip(picks, winners)):
        v = variants_of(inst, rng)
        if winner in ("model_a", "model_b"):
            good = pick(rng, WIN_WEIGHTS)
            pair = [v[good], v[pick(rng, LOSE_WEIGHTS, {good})]]
            a, b = pair if winner == "model_a" else pair[::-1]
        else:
            a, b = (v[k] for k in rng.sample(["D", "A", "B"] if winner == "tie" else ["F", "B"], 2))
        a, b = maybe_cite(a, inst, rng, 0.25), maybe_cite(b, inst, rng, 0.25)
        messages = conversation(inst, rng, i < 2)  # two follow-ups that share their first exchange
        opponent = rng.choice(OPPONENTS)
        model_a, model_b = (OWN_MODEL, opponent) if ours_on_a[i] else (opponent, OWN_MODEL)
        rows.append(
            {
                "question_id": f"{rng.getrandbits(128):032x}",
                "model_a": model_a,
                "model_b": model_b,
                "winner": winner,
                "conversation_a": messages + [{"role": "assistant", "content": a}],
                "conversation_b": messages + [{"role": "assistant", "content": b}],
                "turn": sum(m["role"] == "user" for m in messages),
                "language": "English",
                "tstamp": round(start + rng.uniform(0, 35 * 86400), 4),
            }
        )
    rows.sort(key=lambda r: r["tstamp"])
    return rows
