## ---- capacity at a latency budget -------------------------------------------------
# `make capacity` searches each cell of capacity.yaml (the 14 client x protocol pairs
# at 200 items, 50 callers) for the highest offered rate it carries within the SLO
# (docs/method.md, "Capacity at a latency budget"), set up as `make matrix` is.
#   CAPACITY_SPEC=capacity.yaml   another capacity spec
#   CAPACITY_FLAGS=...            extra flags for `rpcbed capacity` (e.g. -q, -out DIR)
#   A=DIR B=DIR                   capacity-agree: the two runs to check
CAPACITY_SPEC  ?= capacity.yaml
CAPACITY_FLAGS ?=

capacity: matrix-setup ## the most load each cell carries within its SLO (p99 from the intended start, errors): results/<run>-capacity/capacity.md (about 9 min)
	$(BIN)/rpcbed capacity -runner $(RUNNER) -spec $(CAPACITY_SPEC) $(CAPACITY_FLAGS)

capacity-agree: build ## two capacity runs agree? each knee inside the other's interval for >= 90 % of cells, no paired ranking flipped (A=DIR B=DIR)
	$(BIN)/rpcbed capacity agree $(A) $(B)

.PHONY: capacity capacity-agree
