// Types of require('@tidepool-rs/pool/metrics'): Prometheus metrics from a pool.
import type { Registry } from 'prom-client';
import type { Pool } from './index';

export interface CollectMetricsOptions {
  /** Where the metrics are registered. @default prom-client's default registry (`register`) */
  registry?: Registry<any>;
  /** Put before every metric name. @default 'tidepool_' */
  prefix?: string;
  /**
   * Labels on every sample of this pool (Prometheus label names; not `le`,
   * `outcome`, `code`, `reason` or `quantile`). Pools in one registry need
   * labels that tell them apart, such as `{ pool: 'thumbnails' }`.
   */
  labels?: Record<string, string>;
}

/**
 * Reports `pool` in a prom-client registry, read at each scrape:
 * `tidepool_threads`, `tidepool_threads_busy`, `tidepool_queue_length`,
 * `tidepool_queue_oldest_age_seconds` (gauges); `tidepool_tasks_total{outcome, code}`,
 * `tidepool_thread_spawns_total{reason}`, `tidepool_thread_retires_total`,
 * `tidepool_thread_spawn_errors_total` (counters); `tidepool_task_wait_seconds`
 * and `tidepool_task_run_seconds` (histograms). Returns a function that
 * stops reporting this pool. Throws `ERR_TIDEPOOL_NO_PROM_CLIENT` when
 * prom-client is not installed.
 */
export function collectMetrics(pool: Pool<any, any>, options?: CollectMetricsOptions): () => void;
