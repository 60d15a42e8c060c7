# SPDX-License-Identifier: GPL-2.0
# kmod/dkms.mk - `make dkms-install` and `make dkms-uninstall`, included by
# the top-level Makefile.
#
#   dkms-install    copies the module's source tree (kmod/dkms.conf lists
#                   it) to $(DKMS_SOURCETREE)/ptask-$(DKMS_VERSION), then
#                   dkms add, build and install for kernel $(DKMS_KVER)
#   dkms-uninstall  dkms remove (every kernel) and removes that tree
#
# Variables:
#   DKMS_KVER=$(KVER)         the kernel to build for (dkms -k): by default
#                             the one whose headers the module builds
#                             against, not `uname -r` (a container's or a
#                             VM host's kernel may have no headers here)
#   DKMS_VERSION              PACKAGE_VERSION of kmod/dkms.conf
#   DKMS_SOURCETREE=/usr/src  where dkms finds <name>-<version>
#   DKMS_TREE=, DKMS_INSTALLTREE=
#                             dkms's own tree (/var/lib/dkms) and where
#                             it installs modules (/lib/modules); set them
#                             (and DKMS_SOURCETREE) to build and install
#                             under a scratch directory instead, as
#                             scripts/dkms-test.sh (make check-dkms) does
#
# Needs root for the default trees.  Nothing is loaded: `modprobe ptask`
# is the administrator's.

DKMS ?= dkms
DKMS_NAME := ptask
DKMS_VERSION ?= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' kmod/dkms.conf)
DKMS_KVER ?= $(KVER)
DKMS_SOURCETREE ?= /usr/src
DKMS_TREE ?=
DKMS_INSTALLTREE ?=
DKMS_SRCDIR = $(DKMS_SOURCETREE)/$(DKMS_NAME)-$(DKMS_VERSION)
DKMS_ARGS = -m $(DKMS_NAME) -v $(DKMS_VERSION) --sourcetree $(DKMS_SOURCETREE) \
	$(if $(DKMS_TREE),--dkmstree $(DKMS_TREE)) \
	$(if $(DKMS_INSTALLTREE),--installtree $(DKMS_INSTALLTREE))
# The module's sources (no build outputs), core/ included.
DKMS_FILES = $(filter-out %.mod.c,$(wildcard kmod/*.[ch])) kmod/Kbuild \
	$(wildcard core/*.[ch]) uapi/ptask.h

.PHONY: dkms-install dkms-uninstall dkms-tree

# The source tree alone (also what a distribution package would ship).
dkms-tree:
	@if [ -z "$(DKMS_VERSION)" ]; then \
		echo "dkms: no PACKAGE_VERSION in kmod/dkms.conf" >&2; exit 1; fi
	@echo "dkms: source tree $(DKMS_SRCDIR)"
	$(Q)rm -rf $(DKMS_SRCDIR)
	$(Q)for f in $(filter-out core/%,$(DKMS_FILES)); do \
		install -D -m 0644 $$f $(DKMS_SRCDIR)/$$f || exit 1; done
	$(Q)for f in $(filter core/%,$(DKMS_FILES)); do \
		install -D -m 0644 $$f $(DKMS_SRCDIR)/kmod/$$f || exit 1; done
	$(Q)sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(DKMS_VERSION)"/' \
		kmod/dkms.conf >$(DKMS_SRCDIR)/dkms.conf

dkms-install: kernel-ok
	@command -v $(DKMS) >/dev/null || { echo "dkms: not installed; run 'make deps'" >&2; exit 1; }
	@$(MAKE) dkms-tree
	@if $(DKMS) status $(DKMS_ARGS) 2>/dev/null | grep -q .; then \
		echo "dkms: $(DKMS_NAME)/$(DKMS_VERSION) was added before; removing it first"; \
		$(DKMS) remove $(DKMS_ARGS) --all; fi
	$(DKMS) add $(DKMS_ARGS)
	$(DKMS) build $(DKMS_ARGS) -k $(DKMS_KVER)
	$(DKMS) install $(DKMS_ARGS) -k $(DKMS_KVER)
	@$(DKMS) status $(DKMS_ARGS)

dkms-uninstall:
	@command -v $(DKMS) >/dev/null || { echo "dkms: not installed" >&2; exit 1; }
	@if $(DKMS) status $(DKMS_ARGS) 2>/dev/null | grep -q .; then \
		$(DKMS) remove $(DKMS_ARGS) --all; \
	else echo "dkms: $(DKMS_NAME)/$(DKMS_VERSION) is not added"; fi
	rm -rf $(DKMS_SRCDIR)
