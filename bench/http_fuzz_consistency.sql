-- Database consistency after HTTP fuzzing (bench/http_fuzz.sh, crates/cli/tests/http_fuzz.rs):
-- each query lists violations as (what, id); all must return no row once the conductor had
-- time to finish what the fuzzer started. Valid on SQLite and MariaDB alike; one per statement.
SELECT 'cluster without its two default nodegroups', c.uuid FROM cluster c
  WHERE (SELECT COUNT(*) FROM nodegroup n WHERE n.cluster_id = c.uuid AND n.is_default = 1) <> 2;
SELECT 'nodegroup without its cluster', n.uuid FROM nodegroup n
  LEFT JOIN cluster c ON c.uuid = n.cluster_id WHERE c.id IS NULL;
SELECT 'cluster without its template', c.uuid FROM cluster c
  LEFT JOIN cluster_template t ON t.uuid = c.cluster_template_id WHERE t.id IS NULL;
SELECT 'cluster stuck in progress', uuid FROM cluster WHERE status LIKE '%IN_PROGRESS';
SELECT 'nodegroup stuck in progress', uuid FROM nodegroup WHERE status LIKE '%IN_PROGRESS';
SELECT 'duplicate quota', project_id FROM quotas GROUP BY project_id, resource HAVING COUNT(*) > 1;
SELECT 'negative quota', project_id FROM quotas WHERE hard_limit < 0;
SELECT 'nodegroup count outside its bounds', uuid FROM nodegroup
  WHERE node_count < 0 OR (max_node_count IS NOT NULL AND min_node_count > max_node_count);
