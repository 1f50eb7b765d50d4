replicaCount: 1
env:
  PROMETHEUS_RETENTION: "${retention}"
  PROMETHEUS_SCRAPE_INTERVAL: "${scrape_interval}"
  ALERTMANAGER_URL: "http://${alertmanager}"
resources:
  requests:
    cpu: 500m
    memory: 1Gi
