//! Reconciles asked for by the operator itself (not by a watch): a sync named on a broadcast
//! channel (an S3 checkpoint changed, a restart place freed), as a stream for
//! `Controller::reconcile_on`.

use futures::Stream;
use kube::runtime::reflector::ObjectRef;
use pms_crds::PaimonMysqlSync;
use tokio::sync::broadcast;

/// What `trigger` sends of namespace `ns` (`None`: all), as a stream for
/// `Controller::reconcile_on` (a receiver that lagged skips what it missed: those syncs are
/// reconciled at their next resync anyway).
pub fn in_namespace(
    trigger: &broadcast::Sender<ObjectRef<PaimonMysqlSync>>,
    ns: Option<&str>,
) -> impl Stream<Item = ObjectRef<PaimonMysqlSync>> {
    let ns = ns.map(String::from);
    futures::stream::unfold(trigger.subscribe(), move |mut rx| {
        let ns = ns.clone();
        async move {
            loop {
                match rx.recv().await {
                    Ok(sync) if ns.is_none() || sync.namespace == ns => return Some((sync, rx)),
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    })
}
