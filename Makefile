# userlistd: `make demo` runs the main job, `make test` the tests; release build and installation.
#
#   make release                          static-stdlib release binaries in .build/release
#   make install [PREFIX=/usr/local] [DESTDIR=]   (binaries, units, man pages, bash and zsh completion)
#   make uninstall [PREFIX=/usr/local] [DESTDIR=]
#   (man pages: man/*.1 and man/*.8 are generated from --help by scripts/gen-man.py)
#
# After a real install: systemd-sysusers; systemd-tmpfiles --create (none shipped today);
# systemctl daemon-reload; systemctl enable --now userlistd.socket

PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
UNITDIR     ?= /lib/systemd/system
SYSUSERSDIR ?= /usr/lib/sysusers.d
SYSCONFDIR  ?= /etc
MANDIR      ?= $(PREFIX)/share/man
# Shell completion, where Debian's shells look: bash-completion loads completions/<command> from
# every $XDG_DATA_DIRS (/usr/local/share and /usr/share); zsh's fpath holds vendor-completions
# for packages under /usr and site-functions under /usr/local.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
else
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
endif
SWIFT       ?= swift
INSTALL     ?= install

RELEASE_DIR := .build/release
PRODUCTS    := userlistd userctl

.PHONY: setup build demo test tsan soak soak-bulk bench release install uninstall systemd-check

setup:
	./scripts/setup.sh

build: setup
	$(SWIFT) build

# The main job: userlistd on the embedded store with sample data, and the userctl TUI on it.
demo: setup
	./scripts/demo.sh

# The suites that start child processes (daemons, userctl, tmux, python fixtures, systemd tools),
# as one regular expression over Swift Testing's `Target.Suite/test` names. `make test` runs
# every other suite first, in parallel, then these in their own invocation, one test at a time,
# so that no fault test or child daemon competes with another for the machine. A new suite that
# starts child processes is named `...ProcessTests` and is matched without touching this line.
#   FaultTests                       the fault target: child userlistd under kill -9, SIGTERM, floods
#   ClientDaemonTests                the client library against a real userlistd
#   UserctlCommandTests, TUITests    the userctl binary, and its TUI in tmux
#   SystemdTests                     notify socket, socket activation, journald, systemd-analyze
#   AccessTests                      a probe client run as nobody (setpriv, python3)
#   RemoteUserRepositoryTests        a python3 HTTP fixture server
#   SQLiteChangeFeedTests            a python3 writer in a second process
#   SQLiteFailureTests               chattr
#   UserRepositoryContractTests,     a PostgreSQL server (initdb, pg_ctl) in a temporary directory
#   PostgresStoreTests
PROCESS_TESTS := ^FaultTests\.|\.(ClientDaemonTests|UserctlCommandTests|TUITests|SystemdTests|AccessTests|RemoteUserRepositoryTests|SQLiteChangeFeedTests|SQLiteFailureTests|UserRepositoryContractTests|PostgresStoreTests)/|ProcessTests

# The test command (README and .ci/run use exactly this): a bounded fuzz run of the wire layer,
# then the build (integration tests start the real userlistd and userctl binaries), then the
# in-process suites in parallel, then the child-process suites (PROCESS_TESTS) serialized.
test: setup
	./scripts/fuzz-wire.sh 20 && $(SWIFT) build \
	  && $(SWIFT) test --parallel --skip '$(PROCESS_TESTS)' \
	  && $(SWIFT) test --no-parallel --filter '$(PROCESS_TESTS)'

# The in-process suites built with ThreadSanitizer: a canary race must be reported, then the
# suites must pass with no report (about 6 minutes on 2 cores; .ci/run runs it after `make test`).
tsan: setup
	./scripts/tsan.sh

# A 10-minute soak of the release daemon under churning clients: RSS, descriptors and sessions
# each minute, then their slopes; SOAK_ARGS=--quick for 2 minutes.
soak: setup
	./scripts/soak.sh $(SOAK_ARGS)

# The benchmark against the machine's floor (release build); BENCH_ARGS=--quick for a short run.
bench: setup
	./scripts/bench.sh $(BENCH_ARGS)

# `systemctl restart userlistd` with clients attached, under a real systemd 252 as PID 1 (needs root
# and ../shared/tools/systemd-sandbox; release builds, ~3 min). Not part of `make test`.
systemd-check: setup
	./scripts/systemd-sandbox-check.sh

# Issue 13's 1M-user import -> export round trip through userctl against a real daemon (release);
# SOAK_USERS=20000 for a short run.
soak-bulk: setup
	./scripts/bulk-soak.sh $(SOAK_USERS)

release:
	$(SWIFT) build -c release --static-swift-stdlib --product userlistd
	$(SWIFT) build -c release --static-swift-stdlib --product userctl

# Installs what `make release` built; it does not build (so `sudo make install` never runs swift as root).
# The completion scripts are written by the built userctl itself (`userctl completion bash|zsh`),
# so they always match its commands. RELEASE_DIR=.build/debug installs a debug build (the tests do).
install:
	@for p in $(PRODUCTS); do \
	    test -x $(RELEASE_DIR)/$$p || { echo "$(RELEASE_DIR)/$$p missing: run 'make release' first" >&2; exit 1; }; \
	done
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)
	$(INSTALL) -m 0755 $(addprefix $(RELEASE_DIR)/,$(PRODUCTS)) $(DESTDIR)$(BINDIR)/
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/userlistd.service > $(DESTDIR)$(UNITDIR)/userlistd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/userlistd.service
	$(INSTALL) -m 0644 systemd/userlistd.socket $(DESTDIR)$(UNITDIR)/userlistd.socket
	$(INSTALL) -m 0644 systemd/userlistd.sysusers $(DESTDIR)$(SYSUSERSDIR)/userlistd.conf
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 0644 man/userctl.1 $(DESTDIR)$(MANDIR)/man1/userctl.1
	$(INSTALL) -m 0644 man/userlistd.8 $(DESTDIR)$(MANDIR)/man8/userlistd.8
	$(INSTALL) -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(RELEASE_DIR)/userctl completion bash > $(DESTDIR)$(BASHCOMPDIR)/userctl
	$(RELEASE_DIR)/userctl completion zsh > $(DESTDIR)$(ZSHCOMPDIR)/_userctl
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/userctl $(DESTDIR)$(ZSHCOMPDIR)/_userctl
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/userlistd.conf ]; then \
	    echo "keeping existing $(DESTDIR)$(SYSCONFDIR)/userlistd.conf"; \
	else \
	    echo "$(INSTALL) -m 0644 systemd/userlistd.conf $(DESTDIR)$(SYSCONFDIR)/userlistd.conf"; \
	    $(INSTALL) -m 0644 systemd/userlistd.conf $(DESTDIR)$(SYSCONFDIR)/userlistd.conf; \
	fi

# Leaves /etc/userlistd.conf (it may hold local edits) and /var/lib/userlistd (the data).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PRODUCTS))
	rm -f $(DESTDIR)$(UNITDIR)/userlistd.service $(DESTDIR)$(UNITDIR)/userlistd.socket
	rm -f $(DESTDIR)$(SYSUSERSDIR)/userlistd.conf
	rm -f $(DESTDIR)$(MANDIR)/man1/userctl.1 $(DESTDIR)$(MANDIR)/man8/userlistd.8
	rm -f $(DESTDIR)$(BASHCOMPDIR)/userctl $(DESTDIR)$(ZSHCOMPDIR)/_userctl
