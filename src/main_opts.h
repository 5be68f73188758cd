/*
 * main_opts.h: the daemon's configuration, one table (core/options.h): each option's flag, environment
 * variable, type, bounds, default and validator, written into a struct gs_main_config by
 * gs_options_parse (main.c). The validators check what the table's type cannot (names, files, label
 * keys, addresses) and write one line into err on a bad value.
 */
#ifndef GS_MAIN_OPTS_H
#define GS_MAIN_OPTS_H

#include <stddef.h>

#include "core/options.h"

struct gs_main_config {
	const char *kubeconfig;
	const char *scheduler_name;
	const char *annotation;
	const char *health_addr;
	const char *secure_addr;
	const char *secure_cert_file;
	const char *secure_key_file;
	int insecure_data;
	long qps;
	long burst;
	const char *content_type;
	long max_inflight_binds;
	long mapped_gpu_series;
	const char *log_level;
	const char *log_format;
	int debug_endpoints;
	int events;
	int require_env;
	int recreate_unmutated;
	const char *device_sharing;
	const char *node_alias_label;
	const char *ignored_resources;
	const char *ignored_resource_groups;
	const char *gpu_resources;
	long agent_stale_ms;
	long max_gang_timeout_ms;
	long gang_members_per_ns;
	long gang_gpus_per_ns;
	const char *gang_limits;
	long map_cache_bytes;
	long gpm_bytes;
	long gpm_bytes_per_ns;
	int no_webhook;
	int tolerate_dedicated;
	int gang_placeholders;
	int preemption;
	const char *placeholder_image;
	int engine_audit;
	const char *webhook_addr;
	long webhook_max_conns, webhook_max_conns_per_source;
	const char *tls_cert_file;
	const char *webhook_client_ca_file;
	const char *tls_key_file;
	int self_signed;
	const char *namespace_;
	const char *webhook_secret;
	const char *webhook_service;
	const char *webhook_config_name;
	int leader_elect;
	long le_lease_ms, le_renew_ms, le_retry_ms;
	const char *le_name;
	const char *le_namespace;
	long shutdown_delay_ms;
};

extern const struct gs_opt gs_main_opts[];
extern const size_t gs_main_opts_n;

/* What one option's validator cannot see: options that go together or bound each other. 0, or
 * -EINVAL with one line in err. After gs_options_parse. */
int gs_main_opts_check(const struct gs_main_config *cfg, char *err, size_t errlen);

#endif
