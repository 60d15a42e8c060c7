# SPDX-License-Identifier: GPL-2.0
# install.mk - `make install` and `make uninstall`, included by the top-level
# Makefile after daemon/Makefile.inc and encfs-gpu/Makefile.inc (the build
# outputs are named by their variables: $(PD_BIN), $(LIBPT_SO), ...).
#
#   install     builds libptask, ptaskd, ptaskctl and encfs-gpu, then copies
#               into $(DESTDIR)$(PREFIX):
#                 sbin/ptaskd (SBINDIR; bin/ unless SBINDIR is given)
#                 bin/ptaskctl, bin/encfs-gpu
#                 bin/ptask-<example> for each of $(INSTALL_EXAMPLES) that
#                   exists as build/bin/<example> (skipped, and said, if not)
#                 lib/libptask.so.1.0, .so.1 -> , .so -> , lib/libptask.a
#                 include/ptask/libptask.h and every uapi/*.h (one
#                   directory: libptask.h includes "ptask.h", "ptaskd.h")
#                 lib/pkgconfig/libptask.pc (from libptask/libptask.pc.in)
#                 share/man/man1/encfs-gpu.1, man3/ptask_*.3, man7/ptask.7,
#                   man8/ptaskd.8, man8/ptaskctl.8
#                 lib/systemd/system/ptaskd.service (ExecStart= the
#                   installed ptaskd)
#                 $(PTASK_TWIN_DIR)/encfs-gpu.so, and <example>.so for each
#                   installed example that has one (the host twins ptaskd's
#                   cpu and sim backends load; daemon/Makefile.inc builds
#                   ptaskd with that directory as its default)
#   uninstall   removes exactly those files
#
# Variables (all may be given on the command line):
#   PREFIX=/usr/local  DESTDIR=  BINDIR=$(PREFIX)/bin  SBINDIR=$(BINDIR)
#   LIBDIR=$(PREFIX)/lib  INCLUDEDIR=$(PREFIX)/include
#   MANDIR=$(PREFIX)/share/man  PKGCONFIGDIR=$(LIBDIR)/pkgconfig
#   SYSTEMDUNITDIR=$(PREFIX)/lib/systemd/system
#   INSTALL_EXAMPLES="gemm ioctl-raw"  EXAMPLE_PREFIX=ptask-
#   PTASK_TWIN_DIR=$(PREFIX)/lib/ptask/twins (give it to the build too)
#
# DESTDIR is only prepended when copying (staged installs, packages); the
# paths written into libptask.pc and ptaskd.service never contain it.
# Nothing is run on the live system (no systemctl, and ldconfig only for a
# root install with no DESTDIR).
#
# encfs-gpu in /etc/fstab: mount(8) runs mount.fuse3 with an empty PATH,
# and mount.fuse3 finds encfs-gpu through /bin/sh's default PATH
# (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin): with
# PREFIX=/usr or /usr/local `mount -t fuse.encfs-gpu` works as it is; other
# prefixes use the `fuse` type with `BINDIR/encfs-gpu#CIPHERDIR` as source
# (Documentation/install.md).

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(BINDIR)
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL_EXAMPLES ?= gemm ioctl-raw
EXAMPLE_PREFIX ?= ptask-
INSTALL ?= install

INST_B := build
INST_MAJOR := $(or $(LIBPTASK_MAJOR),1)
INST_MINOR := $(or $(LIBPTASK_MINOR),0)
INST_SONAME := libptask.so.$(INST_MAJOR)
INST_SOFILE := libptask.so.$(INST_MAJOR).$(INST_MINOR)
# Every uapi header: the ioctl contract and, once it is there, the daemon's
# wire protocol; each must compile on its own from include/ptask/
# (tests/daemon/install_test.sh checks).
INST_HEADERS := libptask/libptask.h $(sort $(wildcard uapi/*.h))
INST_MAN1 := $(ENCFS_DIR)/encfs-gpu.1
INST_MAN3 := $(sort $(wildcard man/*.3))
INST_MAN7 := $(sort $(wildcard man/*.7))
INST_MAN8 := $(sort $(wildcard man/*.8))
# What is copied, by build variable (daemon/Makefile.inc, tools/ptaskctl/
# ptaskctl.mk, encfs-gpu/Makefile.inc), so that moving sources moves nothing
# here; deferred (=), as ptaskctl.mk is included below.
INST_SBIN = $(PD_BIN)
INST_BIN = $(PTCTL_BIN) $(ENCFS_BIN)
# Twin libraries: encfs-gpu's, and those of the installed examples.
INST_TWINS = $(TWIN_B)/encfs-gpu.so \
	$(filter $(patsubst %,$(TWIN_B)/%.so,$(INSTALL_EXAMPLES)),$(TWIN_SOS))
# Build targets `install` needs first (override to install what is there).
INSTALL_BUILD ?= libptask ptaskd ptaskctl encfs-gpu $(INST_TWINS)

# Paths inside libptask.pc: relative to ${prefix} where they lie under it.
INST_PC_LIBDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
INST_PC_INCDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

.PHONY: install uninstall install-check-vars

include tools/ptaskctl/ptaskctl.mk

install-check-vars:
	@case "$(PREFIX)$(BINDIR)$(SBINDIR)$(LIBDIR)$(INCLUDEDIR)$(MANDIR)$(PKGCONFIGDIR)$(SYSTEMDUNITDIR)" in \
	*"|"*|*"'"*|*" "*) echo "install: paths may not contain '|', quotes or spaces" >&2; exit 1;; \
	esac
	@case "$(PREFIX)" in /*) ;; *) echo "install: PREFIX must be absolute" >&2; exit 1;; esac

install: install-check-vars $(INSTALL_BUILD)
	@echo "  INSTALL $(DESTDIR)$(PREFIX)"
	$(Q)$(INSTALL) -d -m 0755 '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(SBINDIR)' '$(DESTDIR)$(LIBDIR)' \
		'$(DESTDIR)$(INCLUDEDIR)/ptask' '$(DESTDIR)$(PKGCONFIGDIR)' \
		'$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(MANDIR)/man3' '$(DESTDIR)$(MANDIR)/man7' \
		'$(DESTDIR)$(MANDIR)/man8' '$(DESTDIR)$(SYSTEMDUNITDIR)' \
		'$(DESTDIR)$(PTASK_TWIN_DIR)'
	$(Q)$(INSTALL) -m 0755 $(INST_SBIN) '$(DESTDIR)$(SBINDIR)/'
	$(Q)$(INSTALL) -m 0644 $(INST_TWINS) '$(DESTDIR)$(PTASK_TWIN_DIR)/'
	$(Q)$(INSTALL) -m 0755 $(INST_BIN) '$(DESTDIR)$(BINDIR)/'
	$(Q)for ex in $(INSTALL_EXAMPLES); do \
		if [ -x $(INST_B)/bin/$$ex ]; then \
			$(INSTALL) -m 0755 $(INST_B)/bin/$$ex '$(DESTDIR)$(BINDIR)/$(EXAMPLE_PREFIX)'$$ex || exit 1; \
		else \
			echo "  SKIP    example $$ex (no $(INST_B)/bin/$$ex)"; \
		fi; \
	done
	$(Q)$(INSTALL) -m 0755 $(LIBPT_SO) '$(DESTDIR)$(LIBDIR)/$(INST_SOFILE)'
	$(Q)ln -sfn $(INST_SOFILE) '$(DESTDIR)$(LIBDIR)/$(INST_SONAME)'
	$(Q)ln -sfn $(INST_SONAME) '$(DESTDIR)$(LIBDIR)/libptask.so'
	$(Q)$(INSTALL) -m 0644 $(LIBPT_A) '$(DESTDIR)$(LIBDIR)/libptask.a'
	$(Q)$(INSTALL) -m 0644 $(INST_HEADERS) '$(DESTDIR)$(INCLUDEDIR)/ptask/'
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(INST_PC_LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INST_PC_INCDIR)|g' \
		-e 's|@VERSION@|$(INST_MAJOR).$(INST_MINOR)|g' \
		libptask/libptask.pc.in > '$(DESTDIR)$(PKGCONFIGDIR)/libptask.pc.tmp'
	$(Q)chmod 0644 '$(DESTDIR)$(PKGCONFIGDIR)/libptask.pc.tmp'
	$(Q)mv -f '$(DESTDIR)$(PKGCONFIGDIR)/libptask.pc.tmp' '$(DESTDIR)$(PKGCONFIGDIR)/libptask.pc'
	$(Q)$(INSTALL) -m 0644 $(INST_MAN1) '$(DESTDIR)$(MANDIR)/man1/'
	$(Q)$(INSTALL) -m 0644 $(INST_MAN3) '$(DESTDIR)$(MANDIR)/man3/'
	$(Q)$(INSTALL) -m 0644 $(INST_MAN7) '$(DESTDIR)$(MANDIR)/man7/'
	$(Q)$(INSTALL) -m 0644 $(INST_MAN8) '$(DESTDIR)$(MANDIR)/man8/'
	$(Q)sed -e 's|@BINDIR@|$(SBINDIR)|g' daemon/ptaskd.service \
		> '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd.service.tmp'
	$(Q)chmod 0644 '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd.service.tmp'
	$(Q)mv -f '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd.service.tmp' '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd.service'
	$(Q)sed -e 's|@BINDIR@|$(SBINDIR)|g' 'daemon/ptaskd-exec@.service' \
		> '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd-exec@.service.tmp'
	$(Q)chmod 0644 '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd-exec@.service.tmp'
	$(Q)mv -f '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd-exec@.service.tmp' '$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd-exec@.service'
	$(Q)if [ -z '$(DESTDIR)' ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
		ldconfig; \
	fi
	@if [ -z '$(DESTDIR)' ]; then \
		echo "install: done; 'systemctl daemon-reload' makes systemd read $(SYSTEMDUNITDIR)/ptaskd.service"; \
	fi

uninstall: install-check-vars
	@echo "  UNINST  $(DESTDIR)$(PREFIX)"
	$(Q)rm -f $(foreach f,$(notdir $(INST_SBIN)),'$(DESTDIR)$(SBINDIR)/$(f)') \
		$(foreach f,$(notdir $(INST_BIN)),'$(DESTDIR)$(BINDIR)/$(f)') \
		$(foreach ex,$(INSTALL_EXAMPLES),'$(DESTDIR)$(BINDIR)/$(EXAMPLE_PREFIX)$(ex)') \
		'$(DESTDIR)$(LIBDIR)/$(INST_SOFILE)' '$(DESTDIR)$(LIBDIR)/$(INST_SONAME)' \
		'$(DESTDIR)$(LIBDIR)/libptask.so' '$(DESTDIR)$(LIBDIR)/libptask.a' \
		$(foreach h,$(notdir $(INST_HEADERS)),'$(DESTDIR)$(INCLUDEDIR)/ptask/$(h)') \
		'$(DESTDIR)$(PKGCONFIGDIR)/libptask.pc' \
		$(foreach m,$(notdir $(INST_MAN1)),'$(DESTDIR)$(MANDIR)/man1/$(m)') \
		$(foreach m,$(notdir $(INST_MAN3)),'$(DESTDIR)$(MANDIR)/man3/$(m)') \
		$(foreach m,$(notdir $(INST_MAN7)),'$(DESTDIR)$(MANDIR)/man7/$(m)') \
		$(foreach m,$(notdir $(INST_MAN8)),'$(DESTDIR)$(MANDIR)/man8/$(m)') \
		'$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd.service' \
		'$(DESTDIR)$(SYSTEMDUNITDIR)/ptaskd-exec@.service' \
		$(foreach t,$(notdir $(INST_TWINS)),'$(DESTDIR)$(PTASK_TWIN_DIR)/$(t)')
	$(Q)rmdir '$(DESTDIR)$(INCLUDEDIR)/ptask' 2>/dev/null || true
	$(Q)rmdir '$(DESTDIR)$(PTASK_TWIN_DIR)' '$(dir $(DESTDIR)$(PTASK_TWIN_DIR))' 2>/dev/null || true
