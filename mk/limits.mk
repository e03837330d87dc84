## ---- limits ---------------------------------------------------------------------
# What the limits on every listener cost a measured cell (README: Limits). Not part
# of `make test`: it prints numbers and never fails on them.
bench-answer-budget: ## go-server before and after its answer budget, side by side: the 5000-item cells' req/s and server CPU per call
	scripts/bench-answer-budget.sh

.PHONY: bench-answer-budget
