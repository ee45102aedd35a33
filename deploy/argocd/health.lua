-- Argo CD health check for paimonsync.io/PaimonMysqlSync and PaimonMysqlDatabaseSync (the
-- same phases and conditions). In argocd-cm:
--   resource.customizations.health.paimonsync.io_PaimonMysqlSync: |
--     <this file>
--   resource.customizations.health.paimonsync.io_PaimonMysqlDatabaseSync: |
--     <this file>
-- Healthy: Running with every slot ready. Progressing: not yet seen by the operator, Pending,
-- Rebuilding, or slots not all ready. Suspended: spec.state suspended. Degraded: Failed (an
-- invalid resource, with the reasons) or Degraded (a worker's error, a rebuild that failed), or
-- the Degraded condition True in any phase (rolled back to the last stable spec).
local hs = {status = "Progressing", message = "Waiting for the operator"}
local st = obj.status
if st == nil then
  return hs
end
if st.observedGeneration ~= nil and obj.metadata.generation ~= nil
    and st.observedGeneration < obj.metadata.generation then
  hs.message = "The operator has not acted on generation " .. obj.metadata.generation .. " yet"
  return hs
end
local function condition(kind)
  for _, c in ipairs(st.conditions or {}) do
    if c.type == kind then
      return c
    end
  end
  return nil
end
local phase = st.phase or ""
if phase == "Failed" or phase == "Degraded" then
  local degraded = condition("Degraded")
  hs.status = "Degraded"
  hs.message = (degraded and degraded.message) or phase
elseif condition("Degraded") ~= nil and condition("Degraded").status == "True" then
  -- Running, but not as asked (rolled back to the last stable spec: reason RolledBack).
  hs.status = "Degraded"
  hs.message = condition("Degraded").message
elseif phase == "Suspended" then
  hs.status = "Suspended"
  hs.message = "spec.state is suspended"
elseif phase == "Running" then
  local ready = condition("Ready")
  if ready ~= nil and ready.status == "True" then
    hs.status = "Healthy"
  end
  hs.message = (ready and ready.message) or "Running"
elseif phase ~= "" then
  hs.message = phase
end
return hs
