"""Every default of the project, in one place."""

from __future__ import annotations

from typing import Final

# Skeleton
DEFAULT_MAX_POINTS: Final = 10  # a brief outline's titles
# A full answer's plan: every section waits for the plan up to its own line (and the next one's heading),
# so each line added to the plan lengthens the answer's critical path; fewer, fuller sections keep it
# short (plans of up to 10 sections of at most 150 words came out 0.32-0.34 of the sequential answer,
# against 0.23-0.26, for no shorter critical path: eval/results/quality_full.md).
PLAN_MAX_SECTIONS: Final = 6
# Model profiles (sot/profiles.py): what suits one model, apart from the generic core.
PROFILES: Final = ("generic", "small")
# The server kind assumed where none is named (backends/openai_compat.py has each one's request shape).
DEFAULT_DIALECT: Final = "openai"
# Fewer usable points than this and the question is answered sequentially.
MIN_POINTS: Final = 2
# The shape asked of a skeleton (sot/_shape.py makes the grammar, regex and prompt from these):
# lines numbered 1..max_points, at least SKELETON_MIN_POINTS of them (fewer if max_points is lower),
# each a title of about SKELETON_POINT_WORDS words; a constrained line ends by SKELETON_LINE_CHARS.
SKELETON_MIN_POINTS: Final = 3
SKELETON_POINT_WORDS: Final = 6
SKELETON_LINE_CHARS: Final = 100
# A parsed point longer than this is shortened at a phrase boundary.
MAX_POINT_CHARS: Final = 160
SKELETON_MAX_TOKENS: Final = 320  # a brief outline of titles
PLAN_MAX_TOKENS: Final = 1024  # a full answer's plan: a heading, what it covers and a length per section
# An outline a profile asks for again (too few distinct points) is sampled this way; a point a
# profile asks for again, sampled, takes this seed too.
SECOND_LOOK_TEMPERATURE: Final = 0.8
SECOND_LOOK_SEED: Final = 1

# Expansion and answers
DEFAULT_MAX_PARALLEL: Final = 8
DEFAULT_POINT_MAX_TOKENS: Final = 256  # a brief point
SECTION_MAX_TOKENS: Final = 1024  # a full answer's section
DEFAULT_MAX_TOKENS: Final = 1024
DEFAULT_TEMPERATURE: Final[float | None] = None

# Reasoning models: "off", "low" or "default" (the server's own setting); thinking text is dropped
# from answers, and kept in the Answer only with keep_reasoning.
DEFAULT_REASONING: Final = "default"
# A refused request field is adapted and the call sent again at once; at most this many per call.
MAX_ADAPTATIONS_PER_CALL: Final = 8

# Calls: a total deadline per attempt, because a read timeout resets on every streamed chunk. A stream
# still producing when it passes is ended, not restarted (stalls are caught by DEFAULT_STALL_TIMEOUT_S),
# so it is generous: a long answer on a busy CPU takes minutes.
DEFAULT_TIMEOUT_S: Final = 600.0
CONNECT_TIMEOUT_S: Final = 10.0
DEFAULT_MAX_RETRIES: Final = 4
BACKOFF_INITIAL_S: Final = 0.5
BACKOFF_MAX_S: Final = 8.0
BACKOFF_JITTER_S: Final = 0.5
# A server asking us to wait longer than this is treated as a hard rate limit: fail fast.
RETRY_AFTER_CAP_S: Final = 60.0
RETRYABLE_STATUS: Final = frozenset({408, 409, 429, 500, 502, 503, 504})

# Connection pool
POOL_MAX_CONNECTIONS: Final = 64
# A chat backend keeps open as many connections as it may use: the proxy runs dozens of streams at
# once, and a connection closed when its stream ends is a new TCP handshake for the next request.
# They are held in pools of this many (backends/_pool.py: httpcore's bookkeeping grows with a pool).
POOL_SHARD_CONNECTIONS: Final = 8
POOL_SHARDS: Final = 16  # a larger limit makes the pools larger, not more of them
# An idle connection is let go before the server would close it: uvicorn, llama.cpp's server and Node
# close after 5 s idle, httpx's own default is 5 s too, and a request sent on a connection the server
# is closing that instant fails ("server disconnected without sending a response").
POOL_KEEPALIVE_EXPIRY_S: Final = 4.0

# Environment
ENV_BASE_URL: Final = "SOT_BASE_URL"
ENV_MODEL: Final = "SOT_MODEL"
ENV_API_KEY: Final = "SOT_API_KEY"
ENV_OPENAI_API_KEY: Final = "OPENAI_API_KEY"
ENV_GGUF: Final = "SOT_GGUF"
ENV_LLAMA_SERVER: Final = "SOT_LLAMA_SERVER"
ENV_CACHE_DIR: Final = "SOT_CACHE_DIR"
ENV_JUDGE_API_KEY: Final = "SOT_JUDGE_API_KEY"

# Model name sent when the server does not care (llama.cpp serves one model whatever the name).
LOCAL_MODEL_NAME: Final = "smollm2-135m-instruct"

# Router (learned, the default for --mode auto): WordLlama's packaged files, read by path, never fetched.
# "auto": the learned router where its packages (the router extra: numpy, tokenizers, wordllama) are
# installed, else the rules router; a plain install stays light for remote endpoints.
DEFAULT_ROUTER: Final = "auto"
ROUTER_TOKENIZER_FILE: Final = "l2_supercat_tokenizer_config.json"
ROUTER_WEIGHTS_FILE: Final = "l2_supercat_256.safetensors"
ROUTER_MODEL_FILE: Final = "router_model.json"  # inside sot/router/, written by eval/router/train.py
ROUTER_MAX_CHARS: Final = 4000
ROUTER_MAX_TOKENS: Final = 512

# The wire (backends/_sse.py, backends/openai_compat.py): caps on what a server can make us hold.
SSE_MAX_LINE_BYTES: Final = 1 << 20  # one SSE line (a chunk is a few hundred bytes)
SSE_MAX_EVENT_BYTES: Final = 4 << 20  # one event's data lines together
MAX_RESPONSE_BYTES: Final = 64 << 20  # a whole response body after decompression
MAX_ERROR_BODY_BYTES: Final = 64 << 10  # an error body read to build its message
# A stream with no data event for this long is stalled (comments such as keep-alives do not count):
# the attempt is retried, on another endpoint where there is one. --stall-timeout.
DEFAULT_STALL_TIMEOUT_S: Final = 60.0
# Model discovery (/models) and health checks when no --timeout applies: a total deadline, not a read timeout.
DISCOVERY_TIMEOUT_S: Final = 30.0
HEALTH_PROBE_TIMEOUT_S: Final = 2.0
# A redacted secret: any run of at least this many of its characters (case-insensitive) is masked.
SECRET_MATCH_CHARS: Final = 8

# Proxy (sot proxy): an OpenAI-compatible server in front of the orchestrator.
PROXY_HOST: Final = "127.0.0.1"
PROXY_PORT: Final = 8080
PROXY_MAX_CONCURRENT: Final = 64  # chat requests answered at once
PROXY_MAX_QUEUED: Final = 256  # requests waiting for a slot; past that: 429 at once
PROXY_QUEUE_TIMEOUT_S: Final = 30.0  # longest wait for a slot before a 429
PROXY_RETRY_AFTER_S: Final = 1  # what a 429 tells the client to wait
PROXY_MAX_UPSTREAM_CALLS: Final = 256  # upstream calls in flight, all requests together
PROXY_MAX_BODY_BYTES: Final = 4 * 1024 * 1024
PROXY_MAX_CLIENTS: Final = 32  # (model, client key) pairs with a connection pool of their own
PROXY_MODEL_SUFFIXES: Final = {"+sot": "sot", "+seq": "sequential", "+sequential": "sequential", "+auto": "auto"}
PROXY_LATENCY_BUCKETS_S: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
ENV_PROXY_API_KEY: Final = "SOT_PROXY_API_KEY"

# Batch, report and judge
# Exit code of a run that finished but where some records failed (each failure is its record).
EXIT_SOME_FAILED: Final = 11
# A template that runs longer or builds text larger than this is stopped (--prompts DIR is user code).
TEMPLATE_RENDER_TIMEOUT_S: Final = 2.0
TEMPLATE_MAX_CHARS: Final = 4_000_000
TEMPLATE_MAX_RANGE: Final = 100_000
