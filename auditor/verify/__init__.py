"""`verify`: does a live cluster's Kueue admit work the way the repository means it to?
`verification` runs the checks (`scenarios`) through probe Jobs in scratch namespaces
(`scratch`, `probes`, `readings`); `crossing` and `actor` probe the tenants' boundaries."""
