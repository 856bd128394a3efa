# userlistd: `make demo` runs the main job, `make test` the tests; release build and installation.
#
#   make release                          static-stdlib release binaries in .build/release
#   make install [PREFIX=/usr/local] [DESTDIR=]
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
SWIFT       ?= swift
INSTALL     ?= install

RELEASE_DIR := .build/release
PRODUCTS    := userlistd userctl

.PHONY: setup build demo test bench soak-bulk release install uninstall

setup:
	./scripts/setup.sh

build: setup
	$(SWIFT) build

# The main job: userlistd on the embedded store with sample data, and the userctl TUI on it.
demo: setup
	./scripts/demo.sh

# The test command (README and .ci/run use exactly this): a bounded fuzz run of the wire layer,
# then the build (integration tests start the real userlistd and userctl binaries) and every test.
test: setup
	./scripts/fuzz-wire.sh 20 && $(SWIFT) build && $(SWIFT) test

# The benchmark against the machine's floor (release build); BENCH_ARGS=--quick for a short run.
bench: setup
	./scripts/bench.sh $(BENCH_ARGS)

# Issue 13's 1M-user import -> export round trip through userctl against a real daemon (release);
# SOAK_USERS=20000 for a short run.
soak-bulk: setup
	./scripts/bulk-soak.sh $(SOAK_USERS)

release:
	$(SWIFT) build -c release --static-swift-stdlib --product userlistd
	$(SWIFT) build -c release --static-swift-stdlib --product userctl

# Installs what `make release` built; it does not build (so `sudo make install` never runs swift as root).
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
