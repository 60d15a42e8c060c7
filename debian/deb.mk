# SPDX-License-Identifier: GPL-2.0
# debian/deb.mk - the Debian packages, included by the top-level Makefile.
#
#   deps-deb   install what `make deb` needs (debian/DEPS, through
#              scripts/deps.sh deb; idempotent): `make deps` does not, so
#              that a machine that never builds packages never installs
#              debhelper
#   deb        deps-deb, then dpkg-buildpackage -us -uc -b: the .debs,
#              .changes and .buildinfo in $(DEB_DIR) (debian/rules: it
#              builds the user-space targets in build/ as `make` does, so
#              only what changed is rebuilt)
#   lint-deb   deb, then lintian on its .changes (installs lintian)
#   check-deb  deps-deb, then tests/deb/deb_test.sh: builds the packages,
#              checks their contents, installs them with dpkg -i (root
#              only), uses them, removes them; last line "N passed, M
#              failed, K skipped"
#
# Variables are DEB_-prefixed; those that run a program are deferred (=),
# so that no other make invocation pays for dpkg-parsechangelog.

DEB_DIR := build/deb
DEB_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
DEB_ARCH = $(shell dpkg --print-architecture 2>/dev/null)
DEB_CHANGES = $(DEB_DIR)/ptask_$(DEB_VERSION)_$(DEB_ARCH).changes

.PHONY: deps-deb deb deb-build lint-deb check-deb

deps-deb:
	@scripts/deps.sh deb

deb: deps-deb
	@$(MAKE) deb-build

# dpkg-buildpackage writes into the folder above the tree unless told:
# debian/rules puts the .debs in PTASK_DEB_DIR, dpkg-genchanges and
# dpkg-genbuildinfo look for them there (-u).  A failed build's partial
# output is removed, so a later test never picks up stale packages.
deb-build:
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	@echo "  DEB     $(DEB_DIR) (dpkg-buildpackage -us -uc -b)"
	$(Q)PTASK_DEB_DIR=$(CURDIR)/$(DEB_DIR) dpkg-buildpackage -us -uc -b \
		--changes-option=-u$(CURDIR)/$(DEB_DIR) --buildinfo-option=-u$(CURDIR)/$(DEB_DIR) \
		--changes-file=$(CURDIR)/$(DEB_CHANGES) \
		--buildinfo-file=$(CURDIR)/$(DEB_CHANGES:.changes=.buildinfo) \
		>$(DEB_DIR)/build.log 2>&1 || \
		{ tail -40 $(DEB_DIR)/build.log; rm -f $(DEB_DIR)/*.deb $(DEB_DIR)/*.ddeb; \
		  echo "deb: dpkg-buildpackage failed (log: $(DEB_DIR)/build.log)" >&2; exit 1; }
	@ls $(DEB_DIR)/*.deb | sed 's/^/  built   /'

lint-deb: deb
	@scripts/deps.sh lint
	lintian --display-info --pedantic $(DEB_CHANGES)

check-deb: deps-deb
	@tests/deb/deb_test.sh
