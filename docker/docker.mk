# docker/: the engine bootstrap and the runtime images (rpcbed/go, rpcbed/php,
# rpcbed/java). Included by the top-level Makefile; paths are relative to the root.
# See docker/README.md.
SETUP_TARGETS += setup-docker

engine: ## make sure a Docker engine answers (starts Debian's dockerd when none does)
	@docker/engine.sh up

engine-down: ## stop the dockerd that `make engine` started (never another one)
	@docker/engine.sh down

# The images carry the PHP and Java clients' build output: build those first when
# their fragments are present. Each image is skipped when its inputs are unchanged.
images: engine $(filter setup-php setup-java,$(SETUP_TARGETS)) ## build the runtime images (unchanged ones are skipped)
	@docker/images.sh all

setup-docker: images ## engine up and runtime images built (for the container tests)

images-clean: ## remove every rpcbed image (the next `make images` is a cold build)
	@for n in go php java base; do \
	  refs=$$(docker images "rpcbed/$$n" --format '{{.Repository}}:{{.Tag}}'); \
	  [ -z "$$refs" ] || docker rmi -f $$refs >/dev/null; done

.PHONY: engine engine-down images setup-docker images-clean
