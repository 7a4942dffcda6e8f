# The front door. Run as root on a Debian 12 machine: each target installs what
# it needs and starts what is down (see docker/dev/).
.PHONY: demo test quick bench stop lint image

## The whole portal (Slurm, PostgreSQL, Redis, Celery, web) at http://127.0.0.1:8000
demo:
	bash docker/dev/demo.sh

## Linters and every test, against the live dev cluster (pytest args: make test ARGS=-x)
test:
	bash docker/dev/test.sh $(ARGS)

## The inner loop: tests that need only PostgreSQL (not live, not e2e), two at a time
quick:
	bash docker/dev/quick.sh $(ARGS)

## Benchmarks of the portal itself: figures in bench/results/*.json
bench:
	bash docker/dev/bench.sh $(ARGS)

## The container image storagelab:latest from a local wheelhouse; with no registry, its Debian
## base (debootstrap), PostgreSQL and Redis too (docker/image.sh; prints the images for compose)
image:
	bash docker/dev/docker.sh && bash docker/image.sh

## Stop every dev service (by the pids recorded under /run/storagelab)
stop:
	bash docker/dev/stop.sh

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check .
